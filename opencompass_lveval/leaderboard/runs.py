"""What OpenCompass left in run folders: results, the models and datasets each run was asked
for (its dumped configs), and the first error line of every task log.

A work folder (``-w``) holds one folder per run; ``-r`` adds tasks to an existing run folder and
dumps one more config there. Every config of a run counts: a model x dataset it asked for that
has no result file is missing.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Optional

from ..files.errors import ReportError
from ..report.results import read_results

_ERROR_LINE = re.compile(r'^[\w.]*(?:Error|Exception)\b.*')


@dataclass
class Result:
    """One result file: a model's score on one dataset in one run."""

    run: Path
    model: str
    dataset: str
    values: dict  # the result JSON without per-sample details
    scores: Optional[list[float]] = None  # per-record scores from the details (%), in order
    depths: Optional[list] = None  # per record, where its answer is (``record_depths``)
    # per record, which record of the data it is (``record_ids``), in the order of ``scores``
    record_ids: Optional[list[str]] = None
    # metric -> per-record values (%) of each metric scored per record besides the headline
    metric_scores: dict[str, list[float]] = field(default_factory=dict)
    # factor name -> per-record values of each per-record factor (``Benchmark.record_factors``)
    factors: dict[str, list] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.run / 'results' / self.model / f'{self.dataset}.json'

    @property
    def provenance(self) -> dict:
        """What the result records about itself (an object, or a list of them per replica, the
        shapes ``check_result`` lets through); non-text values count as unrecorded."""
        found = self.values.get('provenance')
        found = found[0] if isinstance(found, list) and found else found
        if not isinstance(found, dict):
            return {}
        return {key: value for key, value in found.items() if isinstance(value, str)}


@dataclass
class Run:
    folder: Path
    results: list[Result]
    models: dict[str, dict] = field(default_factory=dict)  # abbr -> model config (newest)
    datasets: dict[str, list[str]] = field(default_factory=dict)  # model abbr -> dataset abbrs

    @property
    def date(self) -> str:
        """The run's start, from its folder name (``20260101_120000``), else its mtime."""
        try:
            return datetime.strptime(self.folder.name, '%Y%m%d_%H%M%S').isoformat(sep=' ')
        except ValueError:
            return datetime.fromtimestamp(self.folder.stat().st_mtime).isoformat(sep=' ')


def config_digest(model_cfg: dict) -> str:
    """A short digest of a model config (abbr aside): the same digest, the same model settings."""
    settings = {key: value for key, value in model_cfg.items() if key != 'abbr'}
    return hashlib.sha1(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _literal(node: ast.AST, path: Path):
    """The value of a dumped-config expression made of literals and ``dict(key=...)`` calls
    (``dict({...})`` too: mmengine dumps so a dict whose keys are not names, such as a perplexity
    template's); anything else is refused: a run folder is data and its configs are never run."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(item, path) for item in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_literal(k, path): _literal(v, path) for k, v in zip(node.keys, node.values)}
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == 'dict'
        and (not node.args or (len(node.args) == 1 and isinstance(node.args[0], ast.Dict)))
        and all(k.arg for k in node.keywords)
    ):
        given = _literal(node.args[0], path) if node.args else {}
        return {**given, **{k.arg: _literal(k.value, path) for k in node.keywords}}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal(node.operand, path)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    raise _not_data(node, path)


def _not_data(node: ast.AST, path: Path) -> ReportError:
    return ReportError(
        f'{path}, line {getattr(node, "lineno", "?")}: not plain data '
        f'({type(node).__name__}); a dumped OpenCompass config holds only `name = value` '
        'assignments of literals and dict(...). Configs in run folders are read as data, never '
        'run: remove or fix the file'
    )


def _config_data(path: Path) -> dict:
    """The ``models`` and ``datasets`` of a dumped config, as data; a statement that is not an
    assignment (an import, a call, a definition) is no dump and is refused, not skipped."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError) as exc:
        raise ReportError(f'{path} is not a readable config ({exc}); remove or fix it') from exc
    found = {}
    for statement in tree.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
            raise _not_data(statement, path)
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id in ('models', 'datasets')
        ):
            found[statement.targets[0].id] = _literal(statement.value, path)
    return found


def _abbrs(items, path: Path, what: str) -> list[dict]:
    """The entries of ``models`` / ``datasets``: dicts with a string ``abbr``, or an error."""
    if not isinstance(items, list) or not all(
        isinstance(i, dict) and isinstance(i.get('abbr'), str) for i in items
    ):
        raise ReportError(f'{path}: `{what}` must be a list of dicts each with a string abbr')
    return items


def _read_configs(run: Path) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Model configs by abbr and the datasets each model was asked for, from every config the run
    dumped (oldest first, so the newest config of a model wins), read as data."""
    models: dict[str, dict] = {}
    asked: dict[str, list[str]] = {}
    for path in sorted((run / 'configs').glob('*.py')):
        config = _config_data(path)
        datasets = [d['abbr'] for d in _abbrs(config.get('datasets', []), path, 'datasets')]
        for model in _abbrs(config.get('models', []), path, 'models'):
            models[model['abbr']] = model
            known = asked.setdefault(model['abbr'], [])
            known.extend(d for d in datasets if d not in known)
    return models, asked


def read_run(folder: Path, depths: Optional[dict] = None) -> Run:
    """A run's results (per-record scores and answer depths kept, details dropped) and configs.
    ``depths`` caches answer depths by (dataset, data fingerprint): every model evaluated on the
    same records shares them, so each predictions file is read once per board, not per model."""
    from ..framework import benchmarks

    depths = {} if depths is None else depths
    results = []
    if (folder / 'results').is_dir() and any((folder / 'results').glob('*/*.json')):
        for model, by_dataset in read_results(folder).items():
            for dataset, values in by_dataset.items():
                result = Result(
                    folder, model, dataset, {k: v for k, v in values.items() if k != 'details'}
                )
                for benchmark in benchmarks.BENCHMARKS:
                    plain = benchmark.split_abbr(dataset) is not None
                    if plain or benchmark.keeps_variant(dataset):
                        result.scores = benchmark.record_scores(values)
                        result.record_ids = record_ids(values)
                        result.metric_scores = _metric_scores(benchmark, values)
                        result.factors = benchmark.record_factors(values)
                    if not plain:
                        continue
                    key = (dataset, result.provenance.get('data_fingerprint'))
                    if key not in depths or key[1] is None:
                        depths[key] = benchmark.record_depths(folder, model, dataset, values)
                    result.depths = depths[key]
                results.append(result)
    models, asked = _read_configs(folder)
    return Run(folder, results, models, asked)


def _metric_scores(benchmark, values: dict) -> dict[str, list[float]]:
    """Each metric's per-record values besides the headline, where the details hold them."""
    return {
        metric: found
        for metric in benchmark.metrics
        if metric != benchmark.interval_metric
        and (found := benchmark.record_scores(values, metric)) is not None
    }


def record_ids(result: dict) -> Optional[list[str]]:
    """Which record of its data each detail is: OpenCompass names it ``{dataset abbr}_{index in
    the data file}`` (``example_abbr``), whatever part of the file a ``test_range`` took; None
    unless every detail names one."""
    details = result.get('details')
    if not isinstance(details, list) or not details:
        return None
    names = [d.get('example_abbr') if isinstance(d, dict) else None for d in details]
    if all(isinstance(name, str) for name in names):
        return names
    return None


def _run_folders(path: Path) -> list[Path]:
    """``path`` if it is a run folder (results or dumped configs), else the run folders in it:
    a run whose evaluation never finished counts (its asked-for results are missing)."""

    def is_run(folder: Path) -> bool:
        return (folder / 'results').is_dir() or (folder / 'configs').is_dir()

    if is_run(path):
        return [path]
    found = sorted(p for p in path.iterdir() if is_run(p)) if path.is_dir() else []
    if not found:
        raise ReportError(
            f'{path} holds no OpenCompass run (no results/ or configs/ folder in it or in a '
            'folder below it); give the -w folder of a run or one of its run folders'
        )
    return found


def read_runs(paths: list) -> list[Run]:
    """Every run folder under the given work or run folders, oldest first: OpenCompass names
    runs by their start time, so the names order them (file times change when folders are
    copied)."""
    folders = {folder for path in paths for folder in _run_folders(Path(path))}
    depths: dict = {}
    return [read_run(f, depths) for f in sorted(folders, key=lambda f: (f.name, str(f)))]


@functools.lru_cache(maxsize=4096)
def first_error(log: Path) -> Optional[str]:
    """The first line of a task log that reports an error: an exception line (``ValueError:
    ...``), else the first line mentioning an error; None for a clean log. Each log is read once
    however many missing results ask."""
    try:
        lines = log.read_text(encoding='utf-8', errors='replace').splitlines()
    except OSError:
        return None
    for line in lines:
        if _ERROR_LINE.match(line.strip()):
            return line.strip()
    return next((line.strip() for line in lines if 'error' in line.lower()), None)


@functools.lru_cache(maxsize=256)
def _mentions(run: Path, model: str, asked: tuple[str, ...]) -> tuple[tuple[Path, frozenset], ...]:
    """Every inference log of a model in a run with the asked datasets its text mentions, each log
    read once in one pass (one pattern of all the names, longest first; a name found inside a
    longer asked name counts for both), so a hundred missing datasets cost one read, not a
    hundred."""
    pattern = re.compile('|'.join(map(re.escape, sorted(asked, key=len, reverse=True))))
    within = {name: frozenset(other for other in asked if other in name) for name in asked}
    logs = []
    for log in sorted((run / 'logs' / 'infer' / model).glob('*.out')):
        text = log.read_text(encoding='utf-8', errors='replace')
        logs.append((log, frozenset().union(*(within[n] for n in set(pattern.findall(text))))))
    return tuple(logs)


def inference_error(folder: Path, model: str, dataset: str, asked=()) -> Optional[str]:
    """The first error line of the inference log that held ``model`` x ``dataset`` in the run
    ``folder``, with the log, or None. An inference task's log is named after its first dataset,
    so the logs that mention the dataset count too (``asked``: the other datasets of the model)."""
    candidates = [folder / 'logs' / 'infer' / model / f'{dataset}.out']
    asked = tuple(sorted({dataset, *asked}))
    candidates += [
        log
        for log, named in _mentions(folder, model, asked)
        if log not in candidates and dataset in named
    ]
    return _first_error_of(folder, candidates)


def _first_error_of(folder: Path, logs: list[Path]) -> Optional[str]:
    for log in logs:
        error = first_error(log) if log.is_file() else None
        if error:
            return f'{error} ({log.relative_to(folder)})'
    return None


def missing_reason(run: Run, model: str, dataset: str) -> str:
    """Why ``model`` has no result on ``dataset`` in ``run``: the first error line of its
    inference log (``inference_error``), else of its evaluation log."""
    folder = run.folder
    return (
        inference_error(folder, model, dataset, run.datasets.get(model, []))
        or _first_error_of(folder, [folder / 'logs' / 'eval' / model / f'{dataset}.out'])
        or 'no result and no error in the task logs (not run yet, or still running?)'
    )
