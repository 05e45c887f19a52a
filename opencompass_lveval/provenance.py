"""What a result records about how it was made, for leaderboards: the package version and the
fingerprint of the data (a digest of its content), plus the evaluator's own settings."""

from __future__ import annotations

from . import __version__
from .columnar import FINGERPRINT_COLUMN


def provenance(test_set, **settings) -> dict:
    """The ``provenance`` entry of a result (OpenCompass's summarizer ignores it: not a number)."""
    fingerprint = None
    if test_set is not None and FINGERPRINT_COLUMN in getattr(test_set, 'column_names', ()):
        fingerprint = test_set[FINGERPRINT_COLUMN][0] if len(test_set) else None
    return {'package_version': __version__, 'data_fingerprint': fingerprint, **settings}
