"""The benchmarks behind one interface, and their one registry.

Shared code (data check, synthetic data, reports, the OpenCompass summarizer, leaderboards,
published numbers, the CPU baselines, the demo config, the install checks) loops over
``BENCHMARKS`` and never names a benchmark. The package's own are listed in ``BUILTIN``; a
benchmark kept in another distribution joins through the entry point group
``opencompass_lveval.benchmarks`` (``name = "module:Class"``), loaded on first use
(docs/adding-a-benchmark.md); one that cannot join is left out with one warning naming its
distribution, and the rest keep working. Each benchmark keys its results by (task, size): LV-Eval's datasets
and length levels, Ada-LEval's tasks and token settings.
"""

from __future__ import annotations

import importlib
import random
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from ..report.tables import BoardTable, Table

# The package's benchmarks, in the order shared tables list them; entry points come after.
BUILTIN = (
    'opencompass_lveval.lveval.benchmark:LVEval',
    'opencompass_lveval.adaleval.benchmark:AdaLEval',
    'opencompass_lveval.ruler.benchmark:Ruler',
    'opencompass_lveval.longbench_v2.benchmark:LongBenchV2',
    'opencompass_lveval.mrcr.benchmark:MRCR',
)
ENTRY_POINT_GROUP = 'opencompass_lveval.benchmarks'
Cell = tuple[str, str]  # (task, size)
# Written beside synthetic data (``lveval data synth``): data check then calls its small record
# counts synthetic rather than a truncated download.
SYNTHETIC_MARK = 'SYNTHETIC.txt'


def mark_synthetic(folder: Path) -> None:
    from ..files.atomic import write_text

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
    count: Callable[[str], int]  # a text's length in this unit
    texts: str = ''  # the texts it measures, where a benchmark has several units: 'English'
    # The lengths are the model's own tokens: a model with a tokenizer is counted in its tokens;
    # ``name`` and ``count`` are what a model without one (a CPU baseline) is counted in instead.
    model_tokens: bool = False

    @property
    def phrase(self) -> str:
        """``words for English``; the bare name where it measures every text; ``the model's
        tokens (words without a tokenizer)`` for the model's own tokens."""
        if self.model_tokens:
            return f"the model's tokens ({self.name} without a tokenizer)"
        return f'{self.name} for {self.texts}' if self.texts else self.name


def argument(flag: str, **options) -> Argument:
    """One ``add_argument`` call, as data."""
    return flag, options


def argument_names(arguments) -> list[str]:
    """The argparse names of ``argument`` calls: ``--no-cfi`` is ``no_cfi``, a ``dest`` wins."""
    return [
        options.get('dest') or flag.lstrip('-').replace('-', '_') for flag, options in arguments
    ]


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
        return argument_names(self.arguments)


@dataclass(frozen=True)
class OfficialScorer:
    """A benchmark's official scoring of predictions in the official layout, run as ``lveval
    score --benchmark NAME ARGUMENTS``: its help, its arguments (``argument(...)`` calls, in
    ``--help`` order; ``--benchmark`` is the command's own) and ``score``, the function taking
    them as keywords by their argparse names and returning the lines to print; given as
    ``'module:function'`` it is imported only when the command runs."""

    help: str  # what it scores and writes, for ``lveval score --help``
    arguments: tuple[Argument, ...]  # ``argument(...)`` calls, in ``--help`` order
    score: Any  # 'package.module:function', or the function
    # what ``--benchmark`` calls it: the benchmark's name by default; each of a benchmark's
    # several scorers has its own (MRCR's ``mrcr_openai`` and ``mrcr_v2``)
    name: Optional[str] = None

    @property
    def names(self) -> list[str]:
        """Its arguments' argparse names: the keywords ``score`` takes."""
        return argument_names(self.arguments)

    def function(self) -> Callable[..., list[str]]:
        """``score`` itself, its module imported where it is named as text."""
        if not isinstance(self.score, str):
            return self.score
        module, _, name = self.score.partition(':')
        return getattr(importlib.import_module(module), name)


# Where a context splits into sentences: after an end of sentence (Latin or CJK), or at a line
# break. The extractive baseline's candidate answers, unless a benchmark declares otherwise.
SENTENCE_ENDS = r'(?<=[.!?。！？；;])\s*|\n+'


@dataclass(frozen=True)
class PromptReading:
    """How the extractive CPU baseline reads one benchmark's prompts (``models/baselines.py``):
    the question starts at the last match of ``question`` and runs to the prompt's end (an answer
    prefix after it included); the context before it is split on ``candidates`` into the
    candidate answers, of which those matching ``keep`` (anywhere) count. A prompt with no match
    is not this benchmark's. RULER's needles: ``PromptReading(r'\\nWhat (?:is|are all) the
    special magic', keep='One of the special magic')``."""

    question: str  # a regular expression; its last match starts the question
    candidates: str = SENTENCE_ENDS  # a regular expression the context is split on
    keep: Optional[str] = None  # a regular expression a candidate must match; None: any

    def read(self, prompt: str) -> Optional[tuple[list[str], str]]:
        """(candidate answers, question) of a prompt it matches; None for another prompt."""
        import re

        starts = [match.start() for match in re.finditer(self.question, prompt)]
        if not starts:
            return None
        context, question = prompt[: starts[-1]], prompt[starts[-1] :]
        pieces = [piece.strip() for piece in re.split(self.candidates, context) if piece]
        kept = [p for p in pieces if p and (self.keep is None or re.search(self.keep, p))]
        return kept, question.strip()


BUILD_OUTPUT = (
    argument('--out', required=True, help='output folder'),
    argument('--seed', type=int, default=0),
)


class Benchmark(ABC):
    """What shared code asks of a benchmark. ``name`` keys its results everywhere (board rows,
    tidy CSV, JSON); ``title`` is how tables call it."""

    name: str  # the key of its results: board rows, tidy CSV, JSON, file names
    title: str  # how tables and messages call it: 'LV-Eval'
    # Its classes OpenCompass configs may name by string ('module:Class'): reachable as
    # ``opencompass_lveval.Class`` and registered by ``import opencompass_lveval.framework.register``.
    classes: tuple[str, ...] = ()
    # Its dataset configs in the package's configs/ ('path/under/configs.py:variable'), the
    # main one first; install checks and prompt tests load them.
    dataset_configs: tuple[str, ...] = ()
    # How its depth maps place a record, for the leaderboard page's legend ('' for none).
    depth_legend: str = ''
    # What its evaluator reports, in percent (a declared benchmark: its ``metrics``).
    result_metrics: tuple[str, ...] = ('score',)
    # The result metrics a leaderboard keeps: its headline and other ``metrics`` among them, or
    # the board drops their tables (registration refuses that; a declared benchmark: ``metrics``).
    board_metrics: tuple[str, ...] = ('score',)
    # Its second factors beside task x size (``factors.Factor``; ``GridBenchmark`` presents them).
    factors: tuple = ()

    # Data ----------------------------------------------------------------------------------------

    @abstractmethod
    def split_abbr(self, abbr: str) -> Optional[Cell]:
        """(task, size) of one of its plain OpenCompass dataset abbreviations, else None."""

    # What its data files look like, for ``lveval data check`` on a folder that has none.
    data_looked_for: str = ''

    @abstractmethod
    def has_data(self, root: Path) -> bool:
        """Whether the folder holds any of its data files."""

    @abstractmethod
    def check_data(self, root: Path) -> tuple[list[str], bool]:
        """``lveval data check``: the report's lines and whether all is in order."""

    # Its ``lveval data synth`` arguments; a flag two benchmarks declare is one argument (the
    # first registered declares it) whose value both receive.
    synth_arguments: tuple[Argument, ...] = ()

    @abstractmethod
    def write_synthetic(self, out_dir: Path, *, seed: int, **options) -> str:
        """Seeded synthetic data for demos and tests, ``options`` its ``synth_arguments`` by
        argparse name; a line saying what was written."""

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

    def record_scores(self, result: dict, metric: Optional[str] = None) -> Optional[list[float]]:
        """Per-record scores in percent from a result's ``details``, whose mean is ``metric``
        (default the one a board's intervals are about, ``interval_metric``); None where the
        details lack them."""
        return None

    interval_metric: str = 'score'  # the metric ``record_scores`` gives by default

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics it scores per record (``record_scores``), ``interval_metric`` among them:
        each gets intervals and depth maps."""
        return (self.interval_metric,)

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

    def record_factors(self, result: dict) -> dict[str, list]:
        """Per record, its value of each of the benchmark's per-record factors (factor name ->
        values), from a result's ``details``; empty where it has none."""
        return {}

    def depth_maps(self, results: dict[str, dict], scores: dict, depths: dict, **others) -> list:
        """One model's depth maps (``report.depth.DepthMap``) from its results (abbr -> result),
        per-record scores (abbr -> ``record_scores``) and depths (abbr -> ``record_depths``);
        ``metric_scores`` (metric -> abbr -> values) where it scores other ``metrics`` too."""
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
        """Its own subcommands (LV-Eval's ``lveval judge``), each a function adding its parser to
        ``lveval``'s subparsers."""
        return []

    # Its official scorer of predictions in the official layout (``OfficialScorer``), run by
    # ``lveval score --benchmark NAME``, or a tuple of several, each named; the first registered
    # benchmark's first scorer is the default.
    official_scorer: Union[OfficialScorer, tuple[OfficialScorer, ...], None] = None

    def official_scorers(self) -> dict[str, OfficialScorer]:
        """Its official scorers by the name ``--benchmark`` gives (its own name by default)."""
        found = self.official_scorer
        found = found if isinstance(found, tuple) else (found,) if found is not None else ()
        return {scorer.name or self.name: scorer for scorer in found}

    def official_prompt(self, abbr: str, record: dict) -> Optional[tuple[str, int]]:
        """(the official prompt text, the official answer length) of one of its datasets'
        records, where the record holds what the official code formatted; None otherwise."""
        return None

    def random_answer(self, prompt: str, rng: random.Random) -> Optional[str]:
        """A uniformly random valid answer to one of its prompts; None for other prompts."""
        return None

    # How the extractive CPU baseline splits its prompts into candidate answers and a question
    # (``PromptReading``, or a tuple of them for prompts of several shapes, the first that
    # matches a prompt reading it); None: as every prompt by default, the question its last
    # paragraph (after the last blank line), the candidates the sentences and lines before it.
    extractive_reading: Union[PromptReading, tuple[PromptReading, ...], None] = None

    def prompt_readings(self) -> tuple[PromptReading, ...]:
        """Its ``extractive_reading`` as a tuple (empty where it declares none)."""
        found = self.extractive_reading
        return found if isinstance(found, tuple) else (found,) if found is not None else ()

    def demo_datasets(self, path: str) -> list[dict]:
        """Its part of ``configs/eval_demo.py``: dataset configs reading the synthetic data that
        ``lveval data synth`` wrote to ``path``."""
        return []

    def prepare_data(self, dataset_cfgs: list[dict]) -> None:
        """Build the data of these dataset configs (its own) that a run builds itself (RULER's,
        per model, in its tokens), where missing: called once in the run's driver before any
        task starts, and by ``lveval inputs``; never in a task. The default builds none."""
        return None

    def summary(self, abbrs: list[str]) -> tuple[list, list[dict]]:
        """OpenCompass summary rows and groups for its datasets among ``abbrs``."""
        return [], []

    def summary_config(self, datasets: list[dict]) -> dict:
        """A summarizer's rows and groups for its dataset configs ``datasets`` (a config's
        ``summarizer = dict(type=..., **benchmark.summary_config(datasets))``)."""
        rows, groups = self.summary([dataset['abbr'] for dataset in datasets])
        return dict(dataset_abbrs=rows, summary_groups=groups)

    def row_conflicts(self, results: dict[str, Any]) -> list[str]:
        """What makes one leaderboard row's results (dataset abbr -> ``runs.Result``) disagree in
        a way of its own (Ada-LEval: extraction modes); each note is shown on the board."""
        return []

    def level_order(self, names) -> list[str]:
        """The distinct level names in its order (``GridBenchmark``: as declared)."""
        from .sizes import level_key

        return sorted(set(names), key=level_key)

    def check_declaration(self) -> list[str]:
        """What in its declaration the framework cannot use, one line each naming the attribute
        and the fix; registration refuses a benchmark with any. Here: an ``official_scorer``
        taking ``--benchmark``, an ``extractive_reading`` whose patterns do not compile."""
        import re

        where, problems = type(self).__name__, []
        scorers = self.official_scorer
        several = isinstance(scorers, tuple)
        for scorer in scorers if several else (scorers,) if scorers is not None else ():
            if 'benchmark' in scorer.names:
                problems.append(
                    f"{where}.official_scorer declares --benchmark, which is `lveval score`'s "
                    'own: rename the argument'
                )
        if several and len(self.official_scorers()) != len(scorers):
            problems.append(
                f'{where}.official_scorer holds several scorers under one name: give each its '
                "own name (OfficialScorer(..., name='...'))"
            )
        for reading in self.prompt_readings():
            for field in ('question', 'candidates', 'keep'):
                try:
                    re.compile(getattr(reading, field) or '')
                except (re.error, TypeError) as exc:
                    problems.append(
                        f'{where}.extractive_reading.{field} {getattr(reading, field)!r} is no '
                        f'regular expression ({exc}); fix the pattern'
                    )
        return problems

    def shown_sizes(self, sizes: Any) -> list[str]:
        """What a board shows of it (``board_sizes``), as short phrases for one line."""
        return list(sizes)

    def length_unit(self, abbr: str) -> Optional[LengthUnit]:
        """The unit its lengths are given in for one of its datasets (variants included); None
        for other datasets."""
        return None

    def length_units(self) -> list[LengthUnit]:
        """Every unit its datasets' lengths are given in, for texts that name them."""
        return []


def _instance(loaded: Any, origin: str) -> Benchmark:
    from ..files.errors import BenchmarkError

    benchmark = loaded() if isinstance(loaded, type) else loaded
    if not isinstance(benchmark, Benchmark):
        raise BenchmarkError(f'{origin} gives {loaded!r}, not a Benchmark subclass or instance')
    for attribute in ('name', 'title'):
        value = getattr(benchmark, attribute, None)
        if not isinstance(value, str) or not value.strip():
            raise BenchmarkError(f'{origin} gives a benchmark whose {attribute} is {value!r}')
    if problems := benchmark.check_declaration():
        raise BenchmarkError(
            f'{origin} gives a declaration that cannot be used: {"; ".join(problems)}'
        )
    return benchmark


def _builtin(spec: str) -> Benchmark:
    module, _, attribute = spec.partition(':')
    return _instance(getattr(importlib.import_module(module), attribute), spec)


@dataclass(frozen=True)
class Plugin:
    """Where an outside benchmark comes from: its distribution and the phrase naming its entry
    point, for messages."""

    dist: str
    origin: str

    @classmethod
    def of(cls, entry) -> Plugin:
        dist = getattr(entry.dist, 'name', None) or 'an unknown distribution'
        origin = (
            f"the benchmark entry point '{entry.name} = {entry.value}' "
            f'(group {ENTRY_POINT_GROUP}) of {dist}'
        )
        return cls(dist, origin)

    def message(self, problem: str, fix: str = 'Fix', left: str = 'it is left out') -> str:
        """One line: the entry point, what is wrong with it, what is left out, the fix."""
        return (
            f'{self.origin} {problem}; {left}. {fix} {self.dist} or uninstall it '
            f'(pip uninstall {self.dist})'
        )


def _failure(exc: BaseException, printed: str) -> str:
    """What went wrong loading someone else's module, with the last line it printed."""
    if isinstance(exc, SystemExit):
        what = f'it exits the process as it loads (SystemExit: {exc.code!r})'
    else:
        what = f'{type(exc).__name__}: {exc}'
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    return f'{what}, after printing {lines[-1][:200]!r}' if lines else what


class _HeldBack:
    """Stands in for ``sys.stdout`` or ``sys.stderr`` while an outside module loads: holds what
    it prints, then passes every later write through (a logger the module made keeps writing
    to the real stream)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.held, self.holding = stream, [], True

    def write(self, text: str) -> int:
        if self.holding:
            self.held.append(text)
            return len(text)
        return self.stream.write(text)

    def flush(self) -> None:
        if not self.holding:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno: the real stream's
        return getattr(self.stream, name)

    def release(self, show: bool) -> str:
        """What was held (written to the real stream where ``show``); writes pass from now."""
        self.holding = False
        text = ''.join(self.held)
        if show and text:
            self.stream.write(text)
        return text


def _from_entry_point(entry, plugin: Plugin) -> Benchmark:
    """One outside benchmark, loaded and made. Whatever goes wrong (an import error,
    ``sys.exit`` or argparse at import, an abstract class, an ``__init__`` that raises, no
    ``Benchmark``) is one ``BenchmarkError`` naming its distribution. What the module prints
    while it loads goes where it was going, unless it fails: then its last line is in the
    message."""
    import contextlib

    from ..files.errors import BenchmarkError

    out, err = _HeldBack(sys.stdout), _HeldBack(sys.stderr)
    failure: Optional[BaseException] = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            benchmark = _instance(entry.load(), plugin.origin)
    except (Exception, SystemExit) as exc:  # someone else's module: say whose it is
        failure = exc
    printed = out.release(show=failure is None) + err.release(show=failure is None)
    if isinstance(failure, BenchmarkError):  # loaded, but no Benchmark: said already
        raise BenchmarkError(plugin.message(str(failure)[len(plugin.origin) + 1 :]))
    if failure is not None:
        problem = f'failed to load: {_failure(failure, printed)}'
        raise BenchmarkError(plugin.message(problem)) from failure
    return benchmark


def _entry_points() -> list:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda entry: entry.name)


@dataclass(frozen=True)
class Registry:
    """The benchmarks that joined, in order; the plugin each outside one came from (by name);
    and (entry point name, message) of each entry point left out."""

    benchmarks: tuple[Benchmark, ...]
    plugins: dict[str, Plugin]
    left_out: tuple[tuple[str, str], ...]


def _load() -> Registry:
    """The built-in benchmarks, then the entry points' by name. An entry point that cannot
    join (it fails to load, or its benchmark takes a name already registered) is left out
    with one warning naming its distribution: the other benchmarks keep working."""
    from ..files.errors import BenchmarkError

    found = [_builtin(spec) for spec in BUILTIN]
    holders = {benchmark.name: f'{benchmark.title} (built in)' for benchmark in found}
    plugins, left_out = {}, []
    for entry in _entry_points():
        plugin = Plugin.of(entry)
        try:
            benchmark = _from_entry_point(entry, plugin)
        except BenchmarkError as exc:
            left_out.append((entry.name, str(exc)))
            continue
        if benchmark.name in holders:
            problem = f'names its benchmark {benchmark.name!r}, which {holders[benchmark.name]} has'
            left_out.append((entry.name, plugin.message(problem, fix='Rename it in')))
            continue
        holders[benchmark.name] = plugin.origin
        plugins[benchmark.name] = plugin
        found.append(benchmark)
    for _, message in left_out:
        print(f'warning: {message}', file=sys.stderr)
    return Registry(tuple(found), plugins, tuple(left_out))


def __getattr__(name: str):
    """``BENCHMARKS`` is loaded on first use: importing this module costs nothing."""
    if name == 'BENCHMARKS':
        globals()['REGISTRY'] = _load()
        globals()['BENCHMARKS'] = globals()['REGISTRY'].benchmarks
        return globals()['BENCHMARKS']
    raise AttributeError(name)


def registered() -> tuple[Benchmark, ...]:
    """``BENCHMARKS``, looked up each time (tests may replace it)."""
    return sys.modules[__name__].BENCHMARKS


def _registry() -> Registry:
    """What the last load found, where ``BENCHMARKS`` is still what it loaded (tests may
    replace it: then no benchmark has a plugin and none was left out)."""
    benchmarks = registered()
    loaded = globals().get('REGISTRY')
    return loaded if loaded and loaded.benchmarks is benchmarks else Registry(benchmarks, {}, ())


def plugin_of(benchmark: Benchmark) -> Optional[Plugin]:
    """The entry point an outside benchmark joined through; None for the package's own."""
    return _registry().plugins.get(benchmark.name)


def add_commands(benchmark: Benchmark, subparsers) -> None:
    """A benchmark's own subcommands in ``lveval``; an outside benchmark's that cannot be
    added (a command name taken) are left out with one warning naming its distribution."""
    plugin = plugin_of(benchmark)
    try:
        for add_parser in benchmark.commands():
            add_parser(subparsers)
    except Exception as exc:
        if plugin is None:
            raise
        problem = f'gives commands lveval cannot add ({type(exc).__name__}: {exc})'
        print(f'warning: {plugin.message(problem, left="they are left out")}', file=sys.stderr)


def length_unit_of(abbr: str) -> Optional[LengthUnit]:
    """The length unit of the benchmark a dataset abbreviation belongs to, else None."""
    for benchmark in registered():
        unit = benchmark.length_unit(abbr)
        if unit is not None:
            return unit
    return None


def length_units_text() -> str:
    """The registered benchmarks' length units, for help texts: ``LV-Eval: words for English,
    characters for Chinese; Ada-LEval: cl100k_base tokens``."""
    return '; '.join(
        f'{benchmark.title}: {", ".join(unit.phrase for unit in units)}'
        for benchmark in registered()
        if (units := benchmark.length_units())
    )


def named(name: str) -> Benchmark:
    """The registered benchmark called ``name``, or an error listing them (or saying why the
    entry point of that name was left out)."""
    from ..files.errors import BenchmarkError

    for benchmark in registered():
        if benchmark.name == name:
            return benchmark
    for entry, message in _registry().left_out:
        if entry == name:
            raise BenchmarkError(message)
    known = [b.name for b in registered()]
    raise ValueError(f'no benchmark {name!r}; known: {", ".join(known)}')


def classes() -> dict[str, str]:
    """Every benchmark's classes that configs may name: class name -> module."""
    return {
        spec.partition(':')[2]: spec.partition(':')[0]
        for benchmark in registered()
        for spec in benchmark.classes
    }


def dataset_configs() -> list[tuple[str, str]]:
    """(path under configs/, variable) of every benchmark's shipped dataset configs."""
    return [
        (path, variable)
        for benchmark in registered()
        for path, _, variable in (spec.partition(':') for spec in benchmark.dataset_configs)
    ]


def demo_datasets(path: str) -> list[dict]:
    """``configs/eval_demo.py``'s datasets: every benchmark's, reading ``path``."""
    return [config for benchmark in registered() for config in benchmark.demo_datasets(path)]


def prepare_data(dataset_cfgs: list[dict]) -> None:
    """Each benchmark's ``prepare_data`` on its own configs among ``dataset_cfgs``."""
    for benchmark in registered():
        own = [cfg for cfg in dataset_cfgs if benchmark.split_abbr(cfg.get('abbr', '')) is not None]
        if own:
            benchmark.prepare_data(own)


def demo_summarizer(abbrs: list[str]) -> dict:
    """``configs/eval_demo.py``'s summarizer rows and groups, every benchmark's in turn."""
    rows, groups = [], []
    for benchmark in registered():
        more_rows, more_groups = benchmark.summary(abbrs)
        rows += more_rows
        groups += more_groups
    return dict(dataset_abbrs=rows, summary_groups=groups)


def titles() -> str:
    """The registered benchmarks' titles, for help texts: ``LV-Eval and Ada-LEval``."""
    names = [benchmark.title for benchmark in registered()]
    return ' and '.join([', '.join(names[:-1]), names[-1]] if len(names) > 1 else names)
