"""Seeded bootstrap intervals over records, vectorised, for reports, leaderboards and comparisons.

A cell (one dataset at one size) is resampled with replacement; each resample's mean is a matrix
product of the records' scores with that resample's counts, so every row evaluated on a cell's
records is resampled by one counts matrix at once. The counts depend only on the seed, the cell
and its record count: the same cell gets the same resamples in every table, which makes the
Overall stratified by dataset (the mean of the datasets' resampled means, each dataset resampled
on its own) and the paired difference of two rows (both rows' records resampled together) plain
arithmetic on the cells' bootstrap distributions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, NamedTuple, Optional

from .rounding import shown as shown_value

if TYPE_CHECKING:  # numpy loads where intervals are computed, not with `lveval --help`
    import numpy as np

RESAMPLES = 1000
CONFIDENCE = 95  # percent; the interval is the percentile interval of the bootstrap means
SEED = 0
# What every table printing intervals says about them (a report's; a board's adds NOTE's end).
BRACKETS_NOTE = (
    f'[low, high]: {CONFIDENCE}% percentile bootstrap interval over records ({{resamples:,}} '
    'seeded resamples); averages over datasets resample within each dataset.'
)
NOTE = BRACKETS_NOTE + ' Published rows have no per-record scores, so no interval.'


class Interval(NamedTuple):
    low: float
    high: float


def _cell_seed(seed: int, key: Hashable, records: int) -> list[int]:
    """A seed for one cell's resamples, the same in every process (``hash`` is salted)."""
    digest = hashlib.sha1(f'{key!r}/{records}'.encode()).digest()
    return [seed, int.from_bytes(digest[:8], 'little')]


def resample_counts(records: int, resamples: int, seed: int, key: Hashable) -> np.ndarray:
    """(resamples, records): how often each record is drawn in each resample."""
    import numpy as np

    rng = np.random.default_rng(_cell_seed(seed, key, records))
    drawn = rng.integers(0, records, size=(resamples, records))
    drawn += np.arange(resamples)[:, None] * records
    return np.bincount(drawn.ravel(), minlength=resamples * records).reshape(resamples, records)


def bootstrap_means(
    scores: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED, key: Hashable = ''
) -> np.ndarray:
    """(rows, resamples): the resampled means of each row of ``scores`` (rows, records), all rows
    resampled together (paired)."""
    import numpy as np

    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    counts = resample_counts(scores.shape[1], resamples, seed, key)
    return scores @ (counts.T / scores.shape[1])


def bootstrap_cells(
    cells: dict[Hashable, dict[Hashable, np.ndarray]],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[Hashable, dict[Hashable, np.ndarray]]:
    """cell -> row -> its bootstrap means, for cell -> row -> per-record scores. Rows of a cell
    with the same record count share its resamples (one matrix product for them all)."""
    import numpy as np

    found: dict[Hashable, dict[Hashable, np.ndarray]] = {}
    for cell, by_row in cells.items():
        by_size: dict[int, list] = {}
        for row, scores in by_row.items():
            if len(scores):
                by_size.setdefault(len(scores), []).append(row)
        for rows in by_size.values():
            means = bootstrap_means(np.stack([by_row[r] for r in rows]), resamples, seed, cell)
            found.setdefault(cell, {}).update(zip(rows, means))
    return found


def pooled(distributions: Iterable[Optional[np.ndarray]]) -> Optional[np.ndarray]:
    """The bootstrap distribution of an unweighted mean of independent cells (the Overall at a
    level: resampled within each dataset, then averaged); None unless every cell has one."""
    import numpy as np

    found = list(distributions)
    if not found or any(d is None for d in found):
        return None
    return np.mean(found, axis=0)


def interval(distribution: Optional[np.ndarray]) -> Optional[Interval]:
    """The percentile interval of a bootstrap distribution."""
    import numpy as np

    if distribution is None:
        return None
    tail = (100 - CONFIDENCE) / 2
    low, high = np.percentile(distribution, [tail, 100 - tail])
    return Interval(float(low), float(high))


def shown(found: Optional[Interval]) -> str:
    """An interval as tables print it: `` [40.10, 50.30]``, nothing where there is none."""
    return '' if found is None else f' [{shown_value(found.low)}, {shown_value(found.high)}]'


def resamples_in(rows: list, benchmark: str) -> int:
    """How many resamples the board rows' distributions of a benchmark hold (its setting)."""
    found = (len(d) for row in rows for d in row.samples.get(benchmark, {}).values())
    return next(found, RESAMPLES)
