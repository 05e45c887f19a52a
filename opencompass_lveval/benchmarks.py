"""The benchmarks of the package behind one interface, and their registry.

Shared code (data check, synthetic data, reports, the OpenCompass summarizer, leaderboards,
published numbers, the CPU baselines) loops over ``BENCHMARKS`` and never names a benchmark.
Adding one is a package whose ``benchmark`` module defines a ``Benchmark`` subclass, plus its line
in ``PACKAGES``; the README shows a toy one. Each benchmark keys its results by (task, size):
LV-Eval's datasets and length levels, Ada-LEval's tasks and token settings.
"""

from __future__ import annotations

import importlib
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .tables import BoardTable, Table

PACKAGES = (
    'opencompass_lveval.lveval.benchmark',
    'opencompass_lveval.adaleval.benchmark',
)
Cell = tuple[str, str]  # (task, size)
# Written beside synthetic data (``lveval data synth``): data check then calls its small record
# counts synthetic rather than a truncated download.
SYNTHETIC_MARK = 'SYNTHETIC.txt'


def mark_synthetic(folder: Path) -> None:
    from .atomic import write_text

    write_text(
        Path(folder) / SYNTHETIC_MARK,
        'Seeded synthetic data from `lveval data synth`, '
        'in the official formats with fewer records; not the benchmark release.\n',
    )


def is_synthetic(folder: Path) -> bool:
    return (Path(folder) / SYNTHETIC_MARK).is_file()


Argument = tuple[str, dict]


@dataclass(frozen=True)
class LengthUnit:
    """How a benchmark measures a text's length (its levels or settings are in this unit): what
    ``lveval inputs --count-only`` counts a tokenizer-free model's prompts in."""

    name: str  # plural, as printed after a number: 'words', 'cl100k_base tokens'
    count: Callable[[str], int]


def argument(flag: str, **options) -> Argument:
    """One ``add_argument`` call, as data."""
    return flag, options


@dataclass(frozen=True)
class BuildKind:
    """One ``lveval build`` kind: its help, its arguments in ``--help`` order, and the function
    taking them as keywords (by their argparse names) that writes the files."""

    help: str
    arguments: tuple[Argument, ...]
    build: Callable[..., list[Path]]

    @property
    def names(self) -> list[str]:
        """The argparse names of the arguments: ``--no-cfi`` is ``no_cfi``."""
        return [flag.lstrip('-').replace('-', '_') for flag, _ in self.arguments]


BUILD_OUTPUT = (
    argument('--out', required=True, help='output folder'),
    argument('--seed', type=int, default=0),
)


class Benchmark(ABC):
    """What shared code asks of a benchmark. ``name`` keys its results everywhere (board rows,
    tidy CSV, JSON); ``title`` is how tables call it."""

    name: str
    title: str
    result_metrics: tuple[str, ...] = ('score',)  # what its evaluator reports, in percent
    board_metrics: tuple[str, ...] = ('score',)  # the result metrics a leaderboard keeps

    # Data ----------------------------------------------------------------------------------------

    @abstractmethod
    def split_abbr(self, abbr: str) -> Optional[Cell]:
        """(task, size) of one of its plain OpenCompass dataset abbreviations, else None."""

    @abstractmethod
    def has_data(self, root: Path) -> bool:
        """Whether the folder holds any of its data files."""

    @abstractmethod
    def check_data(self, root: Path) -> tuple[list[str], bool]:
        """``lveval data check``: the report's lines and whether all is in order."""

    @abstractmethod
    def write_synthetic(self, out_dir: Path, *, count: int, scale: int, seed: int) -> str:
        """Seeded synthetic data for demos and tests; a line saying what was written."""

    # Reports and leaderboards --------------------------------------------------------------------

    @abstractmethod
    def report(self, results: dict[str, dict[str, dict]], out: Path) -> tuple[list[Table], list]:
        """A run's tables (model -> abbr -> result) and the plots written to ``out``."""

    @abstractmethod
    def board_sizes(self, rows: list, with_published: bool) -> Any:
        """What the board shows of it (levels, settings per task), from the rows."""

    @abstractmethod
    def board_tables(self, rows: list, sizes: Any) -> list[BoardTable]:
        """Its leaderboard tables; a ``headline`` one is the board's main table."""

    @abstractmethod
    def tidy(self, row, sizes: Any) -> Iterator[tuple[str, str, str, str, Optional[float]]]:
        """(table, item, size, metric, value) for every number of a row: the tidy CSV."""

    def record_scores(self, result: dict) -> Optional[list[float]]:
        """Per-record scores in percent from a result's ``details``, whose mean is the metric a
        board's intervals are about (``interval_metric``); None where the details lack them."""
        return None

    interval_metric: str = 'score'

    def pooled_cells(self, cells: list[Cell]) -> list[tuple[str, str, list[Cell]]]:
        """(item, size, member cells) of the averages it ranks by, each the unweighted mean of
        its members (LV-Eval's Overall at a level); comparisons pool their differences so."""
        return []

    def keeps_variant(self, abbr: str) -> bool:
        """Whether a board keeps the result of this variant dataset (an ablation such as
        BestAnswer's position bias) for its depth maps; plain datasets go by ``split_abbr``."""
        return False

    def record_depths(self, run: Path, model: str, abbr: str, result: dict) -> Optional[list]:
        """Per record, where its answer first occurs as a fraction of its context (None where it
        does not), for depth maps; None for datasets that get no depth map."""
        return None

    def depth_maps(self, results: dict[str, dict], scores: dict, depths: dict) -> list:
        """One model's depth maps (``report.depth.DepthMap``) from its results (abbr -> result),
        per-record scores (abbr -> ``record_scores``) and depths (abbr -> ``record_depths``)."""
        return []

    def json_fields(self, row, sizes: Any) -> dict:
        """Derived values a row's JSON carries beside its results."""
        return {}

    def headline(self, row, sizes: Any) -> Optional[float]:
        """The number rows are ranked by, where this benchmark gives one."""
        return None

    @abstractmethod
    def published(self) -> Iterator[tuple[str, str, Cell, dict[str, float]]]:
        """The papers' numbers: (model, source, (task, size), {metric: value})."""

    # Runs ----------------------------------------------------------------------------------------

    def summary_groups(self, abbrs: list[str], named: set[str]) -> tuple[list[dict], list[str]]:
        """Groups (and their rows) a run's summary lacks for its datasets ``abbrs``."""
        return [], []

    def build_kinds(self) -> dict[str, BuildKind]:
        """Its ``lveval build`` kinds."""
        return {}

    def commands(self) -> list[Callable]:
        """Its own subcommands (``lveval score`` for official-format prediction files), each a
        function adding its parser to ``lveval``'s subparsers."""
        return []

    def official_prompt(self, abbr: str, record: dict) -> Optional[tuple[str, int]]:
        """(the official prompt text, the official answer length) of one of its datasets'
        records, where the record holds what the official code formatted; None otherwise."""
        return None

    def random_answer(self, prompt: str, rng: random.Random) -> Optional[str]:
        """A uniformly random valid answer to one of its prompts; None for other prompts."""
        return None

    def length_unit(self, abbr: str) -> Optional[LengthUnit]:
        """The unit its lengths are given in for one of its datasets (variants included); None
        for other datasets."""
        return None


def _load() -> tuple[Benchmark, ...]:
    found = []
    for module in PACKAGES:
        classes = [
            value
            for value in vars(importlib.import_module(module)).values()
            if isinstance(value, type) and issubclass(value, Benchmark) and value is not Benchmark
        ]
        found += [cls() for cls in classes if cls.__module__ == module]
    return tuple(found)


def __getattr__(name: str):
    """``BENCHMARKS`` is loaded on first use: importing this module costs nothing."""
    if name == 'BENCHMARKS':
        globals()['BENCHMARKS'] = _load()
        return globals()['BENCHMARKS']
    raise AttributeError(name)


def length_unit_of(abbr: str) -> Optional[LengthUnit]:
    """The length unit of the benchmark a dataset abbreviation belongs to, else None."""
    from . import benchmarks

    for benchmark in benchmarks.BENCHMARKS:
        unit = benchmark.length_unit(abbr)
        if unit is not None:
            return unit
    return None


def named(name: str) -> Benchmark:
    """The registered benchmark called ``name``, or an error listing them."""
    from . import benchmarks

    for benchmark in benchmarks.BENCHMARKS:
        if benchmark.name == name:
            return benchmark
    known = [b.name for b in benchmarks.BENCHMARKS]
    raise ValueError(f'no benchmark {name!r}; known: {", ".join(known)}')
