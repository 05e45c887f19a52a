"""What a result records about how it was made, for leaderboards: the package version and the
fingerprint of the data (a digest of its content), plus the evaluator's own settings."""

from __future__ import annotations

from .. import __version__
from ..files.columnar import FINGERPRINT_COLUMN, ORIGIN_COLUMN, SYNTHETIC


def provenance(test_set, **settings) -> dict:
    """The ``provenance`` entry of a result (OpenCompass's summarizer ignores it: not a number)."""
    fingerprint = None
    if test_set is not None and FINGERPRINT_COLUMN in getattr(test_set, 'column_names', ()):
        fingerprint = test_set[FINGERPRINT_COLUMN][0] if len(test_set) else None
    found = {'package_version': __version__, 'data_fingerprint': fingerprint, **settings}
    columns = getattr(test_set, 'column_names', ())
    if ORIGIN_COLUMN in columns and len(test_set) and test_set[ORIGIN_COLUMN][0] == SYNTHETIC:
        found['data_origin'] = SYNTHETIC  # a string: readers keep only text provenance
    return found
