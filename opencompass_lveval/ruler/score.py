"""Score a folder of RULER predictions in the official layout exactly as RULER's
``scripts/eval/evaluate.py`` does, and write its ``summary.csv`` and ``submission.csv`` byte for
byte.

Input: ``<task>.jsonl`` files (``pred``, ``outputs``, ``others``, ``index``, as
``pred/call_api.py`` writes them) or their chunks ``<task>-<n>.jsonl``, which are joined in name
order as the official script joins them (it also rewrites ``<task>.jsonl`` from them and deletes
them; here they are read and left as they are). Tasks go in synthetic.yaml's order; a task
without a file is left out, as officially. Standard library and the metrics only: no pandas.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..files.atomic import atomic_open
from ..files.errors import RulerDataError
from ..files.jsonl import json_objects
from .metrics import METRICS, postprocess_pred
from .tasks import TASKS, RulerTask

_CHUNK = re.compile(r'.*[^_]+-\d+\.jsonl')


@dataclass
class ScoredTask:
    task: RulerTask
    predictions: list[str]  # post-processed
    ids: list  # ``others['id']``, else ``index``
    score: float

    @property
    def nulls(self) -> str:
        """evaluate.py's ``Nulls``: empty predictions after post-processing, of all."""
        return f'{sum(not p for p in self.predictions)}/{len(self.predictions)}'


def _records(paths: list[Path]) -> list[tuple[str, dict]]:
    return [found for path in paths for found in json_objects(path, ('pred',), RulerDataError)]


def prediction_files(pred_dir: Path) -> dict[str, list[Path]]:
    """Each task's files: its chunks in name order where there are any, else ``<task>.jsonl``."""
    names = sorted(p.name for p in Path(pred_dir).iterdir() if p.suffix == '.jsonl' and p.is_file())
    chunks: dict[str, list[Path]] = {}
    for name in names:
        if _CHUNK.match(name):
            chunks.setdefault('-'.join(name.split('-')[:-1]), []).append(Path(pred_dir) / name)
    found = {}
    for task in TASKS:
        if task.name in chunks:
            found[task.name] = chunks[task.name]
        elif f'{task.name}.jsonl' in names:
            found[task.name] = [Path(pred_dir) / f'{task.name}.jsonl']
    return found


def score_task(task: RulerTask, paths: list[Path]) -> ScoredTask:
    """One task's predictions, references and ids as evaluate.py reads them, and its score."""
    predictions, references, ids = [], [], []
    for where, record in _records(paths):
        prediction, others = record['pred'], record.get('others')
        if not isinstance(prediction, str):
            raise RulerDataError(f'{where}: "pred" must be a string, not {prediction!r}')
        if not isinstance(others, dict) or ('id' not in others and 'index' not in record):
            raise RulerDataError(
                f'{where}: needs "others" (an object, {{}} if empty) and "index", as '
                'pred/call_api.py writes them'
            )
        outputs = record.get('outputs', [record.get('output', '')])
        if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
            raise RulerDataError(f'{where}: "outputs" must be a list of strings')
        if not outputs:
            raise RulerDataError(f'{where}: "outputs" is empty: no answer to score against')
        predictions.append(postprocess_pred(prediction))
        references.append(outputs)
        ids.append(others.get('id', record.get('index')))
    if not predictions:
        raise RulerDataError(f'{", ".join(map(str, paths))}: no predictions')
    return ScoredTask(task, predictions, ids, METRICS[task.metric](predictions, references))


def score_folder(pred_dir: str | Path) -> list[ScoredTask]:
    pred_dir = Path(pred_dir)
    if not pred_dir.is_dir():
        raise RulerDataError(f'prediction folder {pred_dir} does not exist')
    found = prediction_files(pred_dir)
    if not found:
        raise RulerDataError(
            f'{pred_dir} has no RULER prediction files (<task>.jsonl, tasks: '
            f'{", ".join(t.name for t in TASKS)})'
        )
    return [score_task(task, found[task.name]) for task in TASKS if task.name in found]


def _cell(value) -> str:
    """A value as pandas' ``to_csv`` writes an object column's: '' for None, else ``str``."""
    return '' if value is None else str(value)


def _write_csv(path: Path, rows: list[list]) -> Path:
    with atomic_open(path, newline='') as stream:
        writer = csv.writer(stream, lineterminator='\n')
        writer.writerows([[_cell(value) for value in row] for row in rows])
    return path


def write_official(scored: list[ScoredTask], out_dir: str | Path) -> list[Path]:
    """``summary.csv`` (``summary-<task>.csv`` for one task) and ``submission.csv`` as
    evaluate.py writes them with pandas: the summary a frame with numbered columns (Tasks,
    Score, Nulls rows), the submission one row per prediction."""
    out_dir = Path(out_dir)
    names = [s.task.name for s in scored]
    summary = [
        list(range(len(scored) + 1)),
        ['Tasks', *names],
        ['Score', *(s.score for s in scored)],
        ['Nulls', *(s.nulls for s in scored)],
    ]
    summary_name = 'summary.csv' if len(scored) > 1 else f'summary-{names[0]}.csv'
    submission = [['Task', 'ID', 'Prediction']] + [
        [s.task.name, id_, prediction]
        for s in scored
        for id_, prediction in zip(s.ids, s.predictions)
    ]
    return [
        _write_csv(out_dir / summary_name, summary),
        _write_csv(out_dir / 'submission.csv', submission),
    ]


def score_and_write(pred_dir: str | Path) -> list[str]:
    """Score a prediction folder, write the two CSV files into it, return what to print: one
    line per task (score, nulls), then the files written."""
    scored = score_folder(pred_dir)
    width = max(len(s.task.name) for s in scored)
    lines = [f'{"task":<{width}}  {"score":>6}  nulls']
    lines += [f'{s.task.name:<{width}}  {s.score:>6}  {s.nulls}' for s in scored]
    written = write_official(scored, pred_dir)
    lines.append(f'wrote {" and ".join(str(p) for p in written)}')
    return lines
