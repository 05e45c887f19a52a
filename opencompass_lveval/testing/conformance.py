"""The conformance kit: what every benchmark must satisfy, checked from its author's own tests.

``check_benchmark(name, folder)`` takes a registered benchmark (its distribution installed, or its
entry point on the path: the kit installs nothing), builds its seeded synthetic data twice, writes
an OpenCompass config of its demo datasets with the CPU baselines, counts its inputs, runs it
through OpenCompass once (each task a subprocess, as users run it), then writes the report and the
leaderboard. Every check that fails is one line naming the check and why; they are raised together
as one ``ConformanceError``, so one run shows all that is wrong.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

OPENCOMPASS = [sys.executable, '-m', 'opencompass.cli.main']
BASELINES = ('extractive-bm25', 'random-guess')
CONFIG = """\
# The conformance kit's run of {name!r}: its demo datasets with the CPU baselines.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.report.summarizer import LongContextSummarizer
from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

with read_base():
    from opencompass_lveval.configs.models.cpu_baselines import models  # noqa: F401

_benchmark = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named({name!r})
datasets = _benchmark.demo_datasets({data!r})
summarizer = dict(type=LongContextSummarizer, **_benchmark.summary_config(datasets))
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(datasets)),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
del _benchmark
"""


class ConformanceError(AssertionError):
    """The checks a benchmark failed, one line each (``check: why``)."""


class ConformanceWarning(UserWarning):
    """What the kit finds suspicious but not wrong (a baseline scoring 0 everywhere)."""


class CheckFailed(Exception):
    """Why one check failed."""


def opencompass_run(config: Path, cwd: Path, *extra: str, env=None, work='out', timeout=600):
    """``opencompass CONFIG -w CWD/WORK EXTRA...`` run in ``cwd`` (each task a subprocess, as
    users run it), ``env`` added to this process's environment."""
    return subprocess.run(
        OPENCOMPASS + [str(config), '-w', str(Path(cwd) / work), *extra],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _cli(*arguments: str) -> tuple[int, str]:
    """``lveval ARGUMENTS`` in this process: its exit code and what it printed."""
    from ..cli import main

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            code = main(list(arguments))
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 1
    return code, printed.getvalue()


def _tail(text: str, lines: int = 8) -> str:
    """The last ``lines`` lines that say something (a traceback's ``^^^`` markers left out)."""
    kept = [line.strip() for line in text.splitlines() if line.strip().strip('^~')]
    return ' | '.join(kept[-lines:])


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob('*'))
        if path.is_file()
    }


@dataclass
class Conformance:
    """One benchmark's checks over one folder; each step records what later steps read."""

    name: str
    folder: Path
    seed: int = 0
    benchmark: object = None
    config: Optional[Path] = None
    run: Optional[Path] = None
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    passed: set[str] = field(default_factory=set)

    def check(self, label: str, step: Callable[[], None], after: str = '') -> None:
        """Run one check, recording why it failed; where the check ``after`` it failed, it is
        not run, and said so."""
        if after and after not in self.passed:
            self.failures.append(f'{label}: not checked, as the {after} check failed')
            return
        try:
            step()
        except CheckFailed as exc:
            self.failures.append(f'{label}: {exc}')
        except Exception as exc:  # the benchmark's own code raised: name it, go on
            self.failures.append(f'{label}: {type(exc).__name__}: {exc}')
        else:
            self.passed.add(label)

    # The checks ---------------------------------------------------------------------------------

    def registration(self) -> None:
        from ..files.errors import BenchmarkError
        from ..framework import benchmarks

        try:
            benchmark = benchmarks.named(self.name)
        except (BenchmarkError, ValueError) as exc:
            raise CheckFailed(
                f'{exc} (is its distribution installed in this environment?)'
            ) from exc
        problems = benchmark.check_declaration()  # what registration refuses an entry point for
        if problems:
            raise CheckFailed('; '.join(problems))
        if not benchmark.demo_datasets('data'):
            raise CheckFailed('demo_datasets gives no dataset configs: nothing would run')
        self.benchmark = benchmark

    def determinism(self) -> None:
        options = {
            flag.lstrip('-').replace('-', '_'): spec.get('default')
            for flag, spec in self.benchmark.synth_arguments
        }
        written = []
        for copy in ('data', 'data-again'):
            self.benchmark.write_synthetic(self.folder / copy, seed=self.seed, **options)
            written.append(_files(self.folder / copy))
        if not written[0]:
            raise CheckFailed(f'write_synthetic wrote no files to {self.folder / "data"}')
        differ = sorted(
            k
            for k in written[0].keys() | written[1].keys()
            if written[0].get(k) != written[1].get(k)
        )
        if differ:
            raise CheckFailed(
                f'the same seed gave other bytes in {", ".join(differ)}: seed every random choice'
            )
        lines, ok = self.benchmark.check_data(self.folder / 'data')
        if not ok:
            raise CheckFailed(
                '`lveval data check` refuses its own synthetic data: ' + ' | '.join(lines)
            )

    def configs(self) -> None:
        from mmengine.config import Config

        from ..files.atomic import write_text

        path = self.folder / f'eval_{self.name}.py'
        write_text(path, CONFIG.format(name=self.name, data=str(self.folder / 'data')))
        try:
            cfg = Config.fromfile(str(path), format_python_code=False)
        except Exception as exc:  # whatever the benchmark's configs raise: say so
            raise CheckFailed(f'{path} does not parse: {type(exc).__name__}: {exc}') from exc
        abbrs = [dataset['abbr'] for dataset in cfg.datasets]
        unsplit = [abbr for abbr in abbrs if self.benchmark.split_abbr(abbr) is None]
        if unsplit or len(set(abbrs)) != len(abbrs):
            raise CheckFailed(f'dataset abbreviations not its own or repeated: {unsplit or abbrs}')
        rows = cfg.summarizer['dataset_abbrs']
        if not rows:
            raise CheckFailed('summary_config(datasets) gives no summary rows')
        self.config = path

    def count_only(self) -> None:
        code, printed = _cli('inputs', str(self.config), '--count-only')
        if code != 0:
            raise CheckFailed(f'`lveval inputs --count-only` exits {code}: {_tail(printed, 4)}')

    def opencompass(self) -> None:
        # Its tasks see the modules this process sees: a benchmark on the path is found there.
        path = os.pathsep.join(entry for entry in sys.path if entry)
        done = opencompass_run(self.config, self.folder, env={'PYTHONPATH': path})
        runs = sorted((self.folder / 'out').glob('*/results'))
        if done.returncode != 0 or not runs:
            raise CheckFailed(
                f'opencompass exits {done.returncode}: {_tail(done.stdout + done.stderr)}'
            )
        self.run = runs[-1].parent

    def _abbrs(self) -> list[str]:
        return [d['abbr'] for d in self.benchmark.demo_datasets(str(self.folder / 'data'))]

    def _results(self) -> dict[str, dict[str, tuple[Path, dict]]]:
        """model -> abbr -> (path, result) of every baseline and demo dataset; a missing result
        fails the check that asks."""
        found: dict[str, dict[str, tuple[Path, dict]]] = {}
        for model in BASELINES:
            for abbr in self._abbrs():
                path = self.run / 'results' / model / f'{abbr}.json'
                if not path.is_file():
                    raise CheckFailed(f'no result {path}: see {self.run / "logs"}')
                found.setdefault(model, {})[abbr] = path, json.loads(path.read_text())
        return found

    def scores(self) -> None:
        """Every model has every dataset's result, each metric a percentage (per record too), and
        not fractions (every value of a metric within [0, 1]); the random baseline is not perfect
        (a metric it passes accepts anything). A baseline scoring 0 on every dataset is a
        warning."""
        benchmark, results = self.benchmark, self._results()
        values: dict[str, list[float]] = {}
        for path, result in (found for by_abbr in results.values() for found in by_abbr.values()):
            for metric in benchmark.result_metrics:
                value = result.get(metric)
                if not isinstance(value, (int, float)) or not 0 <= value <= 100:
                    raise CheckFailed(f'{path}: {metric} is {value!r}, not a percentage')
                values.setdefault(metric, []).append(value)
            for metric in benchmark.metrics:
                found = benchmark.record_scores(result, metric) or []
                if any(not 0 <= score <= 100 for score in found):
                    raise CheckFailed(f"{path}: a record's {metric} is not from 0 to 100")
                values.setdefault(metric, []).extend(found)
        for metric, found in values.items():
            if 0 < max(found) <= 1:
                raise CheckFailed(
                    f'every {metric} of both baselines, per dataset and per record, lies in '
                    f'[0, 1] (the largest is {max(found):g}): scores given as fractions; give '
                    'percentages (x 100), or declare score_scale = 100 for fractions in details'
                )
        headline = {
            model: [result[benchmark.interval_metric] for _, result in by_abbr.values()]
            for model, by_abbr in results.items()
        }
        random = sum(headline['random-guess']) / len(headline['random-guess'])
        if random >= 100:
            raise CheckFailed(
                f'the random baseline scores {random:.2f}: the metric takes any reply'
            )
        self.warnings += [
            f'{model} scores 0 on every dataset ({benchmark.interval_metric}): check that the '
            'metric takes a right answer, unless no such baseline can give one'
            for model, found in headline.items()
            if not any(found)
        ]

    def depths(self) -> None:
        """Every answer depth lies in [0, 1], and every row of every depth map (its
        ``depth_bins``) holds records of the demo data."""
        benchmark = self.benchmark
        for model, by_abbr in self._results().items():
            found, scores, depths = {}, {}, {}
            for abbr, (path, result) in by_abbr.items():
                placed = benchmark.record_depths(self.run, model, abbr, result)
                if placed is None:
                    continue
                for number, depth in enumerate(placed):
                    if depth is not None and not 0 <= depth <= 1:
                        raise CheckFailed(
                            f"{path}: record {number}'s depth is {depth!r}, not a fraction of "
                            'the context in [0, 1]'
                        )
                found[abbr], depths[abbr] = result, placed
                scores[abbr] = benchmark.record_scores(result) or [0.0] * len(placed)
            for depth_map in benchmark.depth_maps(found, scores, depths):
                empty = [row for row, n in zip(depth_map.rows, depth_map.counts) if not any(n)]
                if empty:
                    raise CheckFailed(
                        f'the depth map of {depth_map.dataset} ({model}) has rows with no record: '
                        f'{", ".join(empty)}; place demo answers in every row of depth_bins, or '
                        'declare the rows the data fills'
                    )

    def random_baseline(self) -> None:
        """``random_answer`` answers each of the benchmark's own prompts as the run rendered
        them (the random baseline falls back to a context sentence where it does not); a
        benchmark declaring none is a warning."""
        import random

        from ..framework.benchmarks import Benchmark
        from ..report.results import origin_prompts, prompt_text

        benchmark = self.benchmark
        if type(benchmark).random_answer is Benchmark.random_answer:
            self.warnings.append(
                'declares no random_answer: the random baseline answers its prompts with a random '
                'context sentence, no valid random answer'
            )
            return
        prompts = [
            (abbr, number, prompt_text(prompt))
            for abbr in self._abbrs()
            for number, prompt in enumerate(origin_prompts(self.run, 'random-guess', abbr) or [])
        ]
        if not prompts:
            raise CheckFailed(f'no random-guess predictions in {self.run / "predictions"}')
        missed = [p for p in prompts if benchmark.random_answer(p[2], random.Random(0)) is None]
        if missed:
            abbr, number, text = missed[0]
            raise CheckFailed(
                f'random_answer gives no answer to {len(missed)} of its {len(prompts)} prompts '
                f'(first: {abbr} record {number}, ending {text[-60:]!r}): the random baseline '
                'answers those with a context sentence; recognise the prompt as the run renders it'
            )

    def summary(self) -> None:
        """OpenCompass's summary has a number for every row the benchmark's summary config
        names, for every model."""
        import csv

        (table,) = sorted((self.run / 'summary').glob('summary_*.csv'))[-1:] or [None]
        if table is None:
            raise CheckFailed(f'OpenCompass wrote no summary_*.csv in {self.run / "summary"}')
        with open(table, newline='') as stream:
            found = {line['dataset']: line for line in csv.DictReader(stream)}
        datasets = self.benchmark.demo_datasets(str(self.folder / 'data'))
        for row in self.benchmark.summary_config(datasets)['dataset_abbrs']:
            name = row[0] if isinstance(row, (list, tuple)) else row
            values = [found.get(name, {}).get(model, '-') for model in BASELINES]
            if '-' in values:
                raise CheckFailed(f'summary row {name!r} has no number in {table}')

    def report(self) -> None:
        out = self.folder / 'report'
        code, printed = _cli('report', str(self.run), '--out', str(out))
        if code != 0:
            raise CheckFailed(f'`lveval report` exits {code}: {_tail(printed, 4)}')
        markdown = (out / 'long_context_report.md').read_text()
        if self.benchmark.title not in markdown:
            raise CheckFailed(
                f'{out / "long_context_report.md"} has no {self.benchmark.title} table'
            )
        for metric in getattr(self.benchmark, 'metrics', ('',)):  # a declared one: each metric
            if not list(out.glob(f'{self.name}*{metric}*.png')):
                raise CheckFailed(f'no plot {self.name}*{metric}*.png in {out}')

    def board(self) -> None:
        import csv

        out = self.folder / 'board'
        code, printed = _cli('leaderboard', str(self.folder / 'out'), '--out', str(out))
        if code != 0:
            raise CheckFailed(f'`lveval leaderboard` exits {code}: {_tail(printed, 4)}')
        with open(out / 'leaderboard.csv', newline='') as stream:
            rows = [r for r in csv.DictReader(stream) if r['benchmark'] == self.name]
        for model in BASELINES:
            for metric in self.benchmark.board_metrics:
                if not any(
                    r['row'].startswith(model) and r['metric'] == metric and r['value']
                    for r in rows
                ):
                    where = out / 'leaderboard.csv'
                    raise CheckFailed(f'{where} has no {self.name} {metric} of {model}')
        board = json.loads((out / 'leaderboard.json').read_text())
        if not any(row['results'].get(self.name) for row in board['rows']):
            raise CheckFailed(f'no row of {out / "leaderboard.json"} has {self.name} results')

    def all(self) -> list[str]:
        """Every check in order; the lines of those that failed."""
        self.check('registration', self.registration)
        self.check('determinism', self.determinism, after='registration')
        self.check('configs', self.configs, after='registration')
        self.check('count-only', self.count_only, after='configs')
        self.check('opencompass run', self.opencompass, after='configs')
        for label, step in (
            ('scores', self.scores),
            ('depths', self.depths),
            ('random baseline', self.random_baseline),
            ('summary', self.summary),
            ('report', self.report),
            ('leaderboard', self.board),
        ):
            self.check(label, step, after='opencompass run')
        return self.failures


def check_benchmark(name: str, folder, seed: int = 0) -> list[str]:
    """Check the registered benchmark ``name`` end to end in the empty folder ``folder`` (a
    pytest ``tmp_path``); raise ``ConformanceError`` listing every check that failed. What is
    suspicious but not wrong is returned, each line also issued as a ``ConformanceWarning``."""
    import warnings

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    conformance = Conformance(name, folder, seed)
    failures = conformance.all()
    for line in conformance.warnings:
        warnings.warn(f'benchmark {name!r}: {line}', ConformanceWarning, stacklevel=2)
    if failures:
        lines = '\n'.join(f'- {line}' for line in failures)
        raise ConformanceError(f'benchmark {name!r} fails {len(failures)} check(s):\n{lines}')
    return conformance.warnings
