"""One rounding rule for every score we show: half-up to two decimals, after float noise.

The same average summed in another order differs in its last bits (44.8349999... and
44.8350000...), and ``round`` and ``'%.2f'`` round the binary value half-even, so one report
said 44.84 in one table and 44.83 in another, and OpenCompass's summary 44.37 where the report
said 44.36. Every table, CSV, board and summary row goes through ``rounded``; the official scores
of a subset (``round(100 * mean, 2)`` in the official code) are computed as before and only shown
this way, which leaves them unchanged.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

PLACES = 2
NOISE_PLACES = 9  # sums of two-decimal scores carry errors far below 1e-9


def rounded(value: float, places: int = PLACES) -> float:
    """``value`` half-up to ``places`` decimals, its float summation noise dropped first."""
    cleaned = Decimal(repr(round(value, NOISE_PLACES)))
    return float(cleaned.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def shown(value: float, places: int = PLACES) -> str:
    """``value`` as every table prints it: ``rounded``, with exactly ``places`` decimals."""
    return f'{rounded(value, places):.{places}f}'


def counted(count: int, noun: str) -> str:
    """A count and its noun, singular for one: ``1 record``, ``4 records``."""
    return f'{count} {noun}{"s" * (count != 1)}'
