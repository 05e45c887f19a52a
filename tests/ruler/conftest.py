from pathlib import Path

import pytest
from ruler_files import LLAMA2_SP, NLTK_DATA, STAND_IN


@pytest.fixture(scope='session')
def llama2_counter():
    """llama2_sp's tokenizer.json as it is, without loading transformers (the slow tests show
    it counts as AutoTokenizer does)."""
    from opencompass_lveval.ruler.tokens import tokenizer_json_counter

    return tokenizer_json_counter(LLAMA2_SP)


@pytest.fixture
def inputs(tmp_path) -> Path:
    """The stand-in inputs with punkt_tab beside them, as a user lays them out."""
    import shutil

    folder = tmp_path / 'inputs'
    shutil.copytree(STAND_IN, folder)
    shutil.copytree(NLTK_DATA, folder / 'nltk_data')
    return folder
