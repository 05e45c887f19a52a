"""Where the public-domain books are: ../shared/corpora beside the checkout."""

from __future__ import annotations

from pathlib import Path

from opencompass_lveval.text import read_book  # noqa: F401  (re-exported for the benches)

DEFAULT = Path(__file__).resolve().parents[2] / 'shared' / 'corpora'
