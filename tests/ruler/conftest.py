from pathlib import Path

import pytest
from parity_data import DATA

GOLDEN = DATA / 'golden' / 'ruler'
STAND_IN = DATA / 'reference' / 'stand_in'
LLAMA2_SP = DATA / 'reference' / 'tokenizers' / 'llama2_sp'
NLTK_DATA = DATA / 'reference' / 'nltk_data'
PUNKT = NLTK_DATA / 'tokenizers' / 'punkt_tab' / 'english'


def golden_files() -> list[tuple[int, str]]:
    """(length, task) of the 30 golden files."""
    return sorted(
        (int(p.parts[-3]), p.parts[-2]) for p in (GOLDEN / 'data').glob('*/*/validation.jsonl')
    )


def golden_text(length: int, task: str) -> str:
    return (GOLDEN / 'data' / str(length) / task / 'validation.jsonl').read_text(encoding='utf-8')


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
