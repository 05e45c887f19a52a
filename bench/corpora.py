"""Where the benches' real data is: ../shared beside the project's own checkout (the whole novels,
the Ada-LEval file), else what tests/data carries (the books' heads, the same file gzipped), which
every clone has."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from opencompass_lveval.prompts.text import read_book  # noqa: F401  (re-exported for the benches)

_SHARED = Path(__file__).resolve().parents[2] / 'shared'
_CARRIED = Path(__file__).resolve().parents[1] / 'tests' / 'data'
DEFAULT = (_SHARED if _SHARED.is_dir() else _CARRIED) / 'corpora'


def stackselect_questions() -> list:
    """The real Ada-LEval ``stackselect_1k.json`` (1,000 questions with their answers)."""
    whole = _SHARED / 'data' / 'adaleval' / 'stackselect_1k.json'
    if whole.is_file():
        return json.loads(whole.read_text(encoding='utf-8'))
    with gzip.open(_CARRIED / 'data' / 'adaleval' / 'stackselect_1k.json.gz', 'rt') as stream:
        return json.load(stream)
