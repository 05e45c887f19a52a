"""Tables as plain data, shared by the benchmarks (which fill them) and the writers (which render
them as Markdown, CSV and HTML); no I/O here."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

# The kinds of leaderboard row: measured by a run, or published in a paper.
MEASURED, PUBLISHED = 'measured', 'published'
SYNTHETIC = 'synthetic'  # measured on the data of `lveval data synth`: tests the pipeline only
SYNTHETIC_MARK = ' (synthetic data)'  # what the label of such a model says, in every table


def synthetic_label(label: str) -> str:
    """The label of a model measured on synthetic data, as reports and boards show it."""
    return label + SYNTHETIC_MARK


def number(value) -> Optional[float]:
    """A metric as a float; None for anything that is not a number (a boolean is not)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def result_value(results: dict, abbr: str, metric: str = 'score') -> Optional[float]:
    """One metric of one dataset in a model's results (abbr -> result), where it is a number."""
    return number(results.get(abbr, {}).get(metric))


@dataclass
class Table:
    """A table of a run's report: a header and rows of labels and numbers."""

    name: str
    stem: str  # file name of its CSV, without extension
    header: list[str]
    rows: list[list]
    # (low, high) per cell, shaped like ``rows``: 95% bootstrap intervals (``intervals.py``)
    intervals: Optional[list[list]] = None


@dataclass
class BoardLine:
    """One leaderboard row's values in a board table; ``notes`` are secondary values shown
    beside them (instruction following beside accuracy)."""

    row: Any  # leaderboard.board.Row
    values: list[Optional[float]]
    notes: Optional[list[Optional[float]]] = None
    remark: str = ''  # why values are absent, shown with the row's status
    intervals: Optional[list] = None  # (low, high) or None per value: 95% bootstrap intervals


@dataclass
class BoardTable:
    """A table of the leaderboard: one line per row that has values, one column per header."""

    key: str  # unique on the board; the HTML table's id
    title: str
    header: list[str]  # the columns after the row's label
    lines: list[BoardLine] = field(default_factory=list)
    heading: int = 2  # Markdown heading level of the title
    headline: bool = False  # the board's main table: status and provenance columns, the plot
    plotted: int = 0  # how many leading columns the page plots (lengths), 0: no plot
    note_label: str = ''  # what ``notes`` are, for the page's tooltips
    note: str = ''  # how the numbers are made, printed under the title
    label: str = 'model'  # what the first column names: models, or a table's own items
    axis: str = 'size'  # the plot's x-axis: the benchmark's sizes in their length unit
    # where the plotted columns sit on the x axis (their lengths in tokens, a log axis); None:
    # evenly spaced
    positions: Optional[list[float]] = None
    metric: str = 'score'  # what the values are: the plot's y-axis


@dataclass(frozen=True)
class ItemLine:
    """The row of a board line that is not a model (a dataset, a level): what the writers read
    of a leaderboard row."""

    label: str
    kind: str = MEASURED
    complete: bool = True

    @property
    def model(self) -> str:
        return self.label


def mean(values: list[Optional[float]]) -> Optional[float]:
    """Average of the values, or None when any is missing. Not rounded: an average of averages
    is computed from these raw values, and every table, CSV, board and summary rounds the number
    it shows once, by ``rounding.rounded``; ``fsum`` makes it the same whatever the order."""
    if not values or any(v is None for v in values):
        return None
    return math.fsum(values) / len(values)


# Text from run folders (model and dataset names, log lines) is data: it must not add rows or
# columns to a Markdown table, render as HTML, run as a spreadsheet formula or name a file.
_MARKDOWN = str.maketrans({'|': '\\|', '<': '&lt;', '>': '&gt;', '\n': ' ', '\r': ' '})
_FORMULA_START = ('=', '+', '-', '@', '\t', '\r')
_FILE_UNSAFE = re.compile(r'[^A-Za-z0-9._-]+')


def markdown_text(text: str) -> str:
    """Text for one Markdown table cell: pipes escaped, HTML inert, one line."""
    return str(text).translate(_MARKDOWN)


def csv_text(value):
    """A CSV cell: text that a spreadsheet would read as a formula gets a leading quote."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def file_part(name: str) -> str:
    """A model or dataset name as part of a file name: letters, digits, ``._-`` only, no
    leading dot."""
    return _FILE_UNSAFE.sub('_', str(name)).lstrip('.') or '_'
