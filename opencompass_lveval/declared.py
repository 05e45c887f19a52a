"""A benchmark stated as data; the framework presents it.

``GridBenchmark`` is the presentation of any benchmark whose results are cells (task x size) with
a headline metric and per-record scores: split abbreviations, summary groups, per-record scores
and depths, depth maps, the run's tables and plots, the leaderboard tables and tidy rows, the
published rows. Ada-LEval stands on it and overrides only its own (its report's metric tables and
chance line, its position maps); LV-Eval's Overall, groups and judge columns are its own.

A ``DeclaredBenchmark`` is a ``GridBenchmark`` whose data the framework also handles. It says
what it is: its cells (tasks x sizes), its prompt and answer fields, its headline metric, where
each record's answer depth lives, and how to score one record and make synthetic ones. The
framework supplies the rest: data check and synthetic files, the dataset and evaluator classes
with provenance (``declared_opencompass.py``), the OpenCompass dataset configs
(``dataset_config``, the shape LV-Eval's and Ada-LEval's entries use too) and summary groups,
and the presentation above. The repository's examples hold a complete one.

Data: one JSON-lines file per cell (``data_file``), each line a record with the prompt's fields,
the answer and, where the benchmark places answers, the answer's depth (0-1 of the context).
"""

from __future__ import annotations

import csv
import re
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from .benchmarks import Benchmark, Cell, mark_synthetic
from .sizes import by_size, is_size
from .tables import BoardLine, BoardTable, Table, mean, result_value

SCORE, DEPTH = 'score', 'depth'  # the per-record keys of the evaluator's details


class GridBenchmark(Benchmark):
    """Results as cells (task, size) of a headline metric with per-record scores, presented
    alike. Dataset abbreviations are ``{prefix}_{task}_{size}``."""

    prefix: str
    tasks: tuple[str, ...]
    headline_metric: str = 'score'  # the mean of the per-record scores
    score_field: str = SCORE  # per record in the evaluator's details: percent, or a bool
    depth_field: Optional[str] = None  # the record's answer depth (0-1), where it has one
    published_file: Optional[Path] = None  # CSV: model, source, task, size, then metrics
    # Leaderboard tables: one per task, its sizes as columns; a second metric in brackets.
    board_title: str = '{title} {task}: {metric} by size'
    board_note_metric: Optional[str] = None
    board_note_label: str = ''
    board_plot: bool = True  # the page plots the table

    @property
    def interval_metric(self) -> str:
        return self.headline_metric

    def abbr(self, task: str, size: str) -> str:
        return f'{self.prefix}_{task}_{size}'

    def split_abbr(self, abbr: str) -> Optional[Cell]:
        found = re.fullmatch(rf'{re.escape(self.prefix)}_(.+)_([^_]+)', abbr)
        if found and found[1] in self.tasks and is_size(found[2]):
            return found[1], found[2]
        return None

    def _group(self, size: str, abbrs: list[str]) -> dict:
        return {'name': f'{self.prefix}_{size}', 'subsets': abbrs}

    def summary_groups(self, abbrs: list[str], named: set[str]) -> tuple[list[dict], list[str]]:
        """The average over its tasks at each size among ``abbrs``, unless already named."""
        cells = [(abbr, cell) for abbr in abbrs if (cell := self.split_abbr(abbr))]
        sizes = [s for s in by_size(c[1] for _, c in cells) if f'{self.prefix}_{s}' not in named]
        groups = [self._group(s, [a for a, c in cells if c[1] == s]) for s in sizes]
        rows = [group['name'] for group in groups] + [a for a, c in cells if c[1] in sizes]
        return groups, rows

    def summary(self, abbrs: list[str]) -> tuple[list, list[dict]]:
        groups, rows = self.summary_groups(abbrs, set())
        return rows, groups

    # Per-record scores and depths ----------------------------------------------------------------

    def _details(self, result: dict, key: str) -> Optional[list]:
        from .report.results import detail_value

        try:
            return [detail_value(d, key) for d in result.get('details') or []] or None
        except (KeyError, TypeError, IndexError):
            return None

    def record_scores(self, result: dict) -> Optional[list[float]]:
        """Per-record scores in percent from the details' ``score_field`` (True/False count 100
        and 0); None unless every record has one of one kind."""
        found = self._details(result, self.score_field)
        if found and all(isinstance(v, bool) for v in found):
            return [100.0 * v for v in found]
        return [float(v) for v in found] if found and all(_is_number(v) for v in found) else None

    def record_depths(self, run: Path, model: str, abbr: str, result: dict) -> Optional[list]:
        found = self._details(result, DEPTH) if self.depth_field else None
        return [v if _is_number(v) else None for v in found] if found else None

    def depth_maps(self, results: dict[str, dict], scores: dict, depths: dict) -> list:
        """Per task, the score by answer depth and size, where records carry depths."""
        from .report.depth import depth_map

        maps = []
        for task in self.tasks:
            columns = {
                cell[1]: (scores[abbr], depths[abbr])
                for abbr in self._abbrs_by_size(task, results)
                if (cell := self.split_abbr(abbr)) and abbr in scores and abbr in depths
            }
            found = depth_map(f'{self.name}_score_by_answer_depth', task, columns)
            maps += [found] if found else []
        return maps

    def _abbrs_by_size(self, task: str, results: dict) -> list[str]:
        sizes = by_size(c[1] for abbr in results if (c := self.split_abbr(abbr)) and c[0] == task)
        return [self.abbr(task, size) for size in sizes]

    # A run's report ------------------------------------------------------------------------------

    def report(self, results: dict[str, dict[str, dict]], out: Path) -> tuple[list[Table], list]:
        """Per task: the headline metric by size for every model with its interval, and its
        plot with error bars."""
        from .intervals import bootstrap_cells, interval
        from .report.plots import plot_lines

        tables, plots, metric = [], [], self.headline_metric
        for task in self.tasks:
            every = {abbr for found in results.values() for abbr in found}
            abbrs = self._abbrs_by_size(task, every)
            if not abbrs:
                continue
            sizes = [self.split_abbr(abbr)[1] for abbr in abbrs]
            cells = {
                abbr: {
                    m: s for m, f in results.items() if (s := self.record_scores(f.get(abbr, {})))
                }
                for abbr in abbrs
            }
            samples = bootstrap_cells(cells)
            values = {m: [result_value(f, a, metric) for a in abbrs] for m, f in results.items()}
            errors = {m: [interval(samples.get(a, {}).get(m)) for a in abbrs] for m in results}
            title = f'{self.title} {task}: {metric} by size'
            rows = [[model, *found] for model, found in values.items()]
            bounds = [[None, *errors[model]] for model in values]
            tables.append(Table(title, f'{self.name}_{task}', ['model', *sizes], rows, bounds))
            path = out / f'{self.name}_{task}_{metric}.png'
            plot_lines(path, title, sizes, values, 'size', f'{metric} (%)', errors=errors)
            plots.append(path)
        return tables, plots

    # The leaderboard ---------------------------------------------------------------------------

    def board_sizes(self, rows: list, with_published: bool) -> dict[str, list[str]]:
        """Task -> the sizes any row has a result at, for the tasks that have any."""
        found = {
            task: by_size(
                {s for row in rows for t, s in row.results.get(self.name, {}) if t == task}
            )
            for task in self.tasks
        }
        return {task: sizes for task, sizes in found.items() if sizes}

    def shown_sizes(self, sizes: dict[str, list[str]]) -> list[str]:
        return [f'{task} {", ".join(shown)}' for task, shown in sizes.items() if shown]

    def board_tables(self, rows: list, sizes: dict[str, list[str]]) -> list[BoardTable]:
        """Per task, the headline metric by size with intervals (the note metric in brackets)."""
        from .intervals import NOTE, interval, resamples_in

        tables, note = [], NOTE.format(resamples=resamples_in(rows, self.name))
        title = self.board_title.format(
            title=self.title, task='{task}', metric=self.headline_metric
        )
        for task, shown in sizes.items():
            lines = [
                BoardLine(
                    row,
                    [self._value(row, task, size) for size in shown],
                    self._notes(row, task, shown),
                    intervals=[interval(self._samples(row, task, size)) for size in shown],
                )
                for row in rows
                if any(t == task for t, _ in row.results.get(self.name, {}))
            ]
            tables.append(
                BoardTable(
                    f'{self.name}-{task}',
                    title.format(task=task),
                    shown,
                    lines,
                    plotted=len(shown) if self.board_plot else 0,
                    note_label=self.board_note_label,
                    note=note,
                )
            )
        return tables

    def headline(self, row, sizes: dict[str, list[str]]) -> Optional[float]:
        """The mean of the headline metric over the cells the row has on the board (a published
        row may lack some: the paper printed no number there); None where it has none."""
        found = [
            value
            for task, shown in sizes.items()
            for size in shown
            if (value := self._value(row, task, size)) is not None
        ]
        return mean(found) if found else None

    def _value(self, row, task: str, size: str, metric: Optional[str] = None) -> Optional[float]:
        cell = row.results.get(self.name, {}).get((task, size), {})
        return cell.get(metric or self.headline_metric)

    def _notes(self, row, task: str, sizes: list[str]) -> Optional[list]:
        if self.board_note_metric is None:
            return None
        return [self._value(row, task, size, self.board_note_metric) for size in sizes]

    def _samples(self, row, task: str, size: str):
        return row.samples.get(self.name, {}).get((task, size))

    def tidy(self, row, sizes: dict[str, list[str]]) -> Iterator[tuple]:
        """(table, item, size, metric, value, interval) of every number of a row; the headline
        metric with its interval."""
        from .intervals import interval

        for task, shown in sizes.items():
            for size in shown:
                for metric, value in row.results.get(self.name, {}).get((task, size), {}).items():
                    found = self._samples(row, task, size)
                    bounds = interval(found) if metric == self.headline_metric else None
                    yield task, task, size, metric, value, bounds

    def published(self) -> Iterator[tuple[str, str, Cell, dict[str, float]]]:
        """The rows of ``published_file``: model, source, task, size, then one column per
        metric (empty where the paper prints none)."""
        from .leaderboard.published import number

        if self.published_file is None:
            return
        with open(self.published_file, newline='', encoding='utf-8') as stream:
            for line in csv.DictReader(stream):
                values = {
                    m: v for m in self.result_metrics if (v := number(line.get(m))) is not None
                }
                if values:
                    yield line['model'], line['source'], (line['task'], line['size']), values


class DeclaredBenchmark(GridBenchmark):
    """A grid benchmark whose data, OpenCompass dataset, evaluator and configs the framework
    supplies: one JSON-lines file per cell, one score per record."""

    sizes: tuple[str, ...]  # its standard sizes; data at any other size runs the same way
    demo_sizes: tuple[str, ...] = ()  # what ``lveval data synth`` writes (default: ``sizes``)
    demo_count: int = 10  # records per cell of the synthetic data
    data_file: str = '{task}_{size}.jsonl'
    input_fields: tuple[str, ...] = ('context', 'input')  # the prompt's fields
    answer_field: str = 'answer'
    prompt: str = '{context}\n\n{input}'
    cut: Optional[str] = 'context'  # the field a middle cut may shorten
    max_out_len: int = 32

    # What it states as code: scoring one record and making synthetic ones -----------------------

    @abstractmethod
    def score_record(self, prediction: str, answer) -> float:
        """One record's score in percent."""

    @abstractmethod
    def synthetic_records(self, task: str, size: str, count: int, seed: int) -> list[dict]:
        """``count`` seeded records of one cell, in the data file's format."""

    # Cells and data ----------------------------------------------------------------------------

    def data_path(self, folder, task: str, size: str) -> Path:
        return Path(folder) / self.data_file.format(task=task, size=size)

    def _data_files(self, root: Path) -> list[tuple[str, Path]]:
        """(task, file) of every data file of its tasks at any size directly in ``root``."""
        found = []
        for task in self.tasks:
            pattern = self.data_file.format(task=task, size='*')
            found += [(task, path) for path in sorted(root.glob(pattern)) if path.is_file()]
        return found

    def has_data(self, root: Path) -> bool:
        return any(self._data_files(root / self.name)) or any(self._data_files(root))

    def read_records(self, path: Path) -> list[dict]:
        """A data file's records; a bad line is an error naming the file, the line and the fix."""
        from .errors import DataError
        from .jsonl import json_objects

        required = (*self.input_fields, self.answer_field)
        if not path.is_file():
            raise DataError(
                f'{path} is missing; write it with `lveval data synth FOLDER` (or the '
                f"benchmark's `lveval build`), or point the dataset's path at its folder"
            )
        return [record for _, record in json_objects(path, required, DataError)]

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        from .errors import DataError

        folder = root / self.name if self._data_files(root / self.name) else root
        lines, ok = [f'{self.title} file  records  status'], True
        for _, path in self._data_files(folder):
            try:
                records, status = len(self.read_records(path)), 'ok'
            except DataError as exc:
                records, status, ok = 0, str(exc), False
            lines.append(f'{path.name}  {records}  {status}')
        if len(lines) == 1:
            lines.append(f'no {self.title} files ({self.data_file}) in {folder}')
        return lines, ok and len(lines) > 1

    def write_synthetic(self, out_dir: Path, *, seed: int, **options) -> str:
        import json

        from .atomic import atomic_open

        folder = Path(out_dir) / self.name
        folder.mkdir(parents=True, exist_ok=True)
        for task in self.tasks:
            for size in self.demo_sizes or self.sizes:
                records = self.synthetic_records(task, size, self.demo_count, seed)
                with atomic_open(self.data_path(folder, task, size)) as stream:
                    stream.writelines(json.dumps(r, ensure_ascii=False) + '\n' for r in records)
        mark_synthetic(folder)
        cells = len(self.tasks) * len(self.demo_sizes or self.sizes)
        return f'wrote {cells} {self.title} files ({self.demo_count} records each) to {folder}'

    # OpenCompass configs -------------------------------------------------------------------------

    def configs(self, path: str, sizes=None, tasks=None, **dataset) -> list[dict]:
        """Its OpenCompass dataset configs reading ``path``, at ``sizes`` (any size) of ``tasks``;
        ``dataset`` adds keys (``limit``)."""
        here = 'opencompass_lveval.declared_opencompass'
        return [
            dataset_config(
                dict(
                    type=f'{here}.DeclaredDataset',
                    abbr=self.abbr(task, size),
                    benchmark=self.name,
                    task=task,
                    size=size,
                    path=path,
                    **dataset,
                ),
                dict(input_columns=list(self.input_fields), output_column=self.answer_field),
                self.prompt,
                self.cut,
                self.max_out_len,
                dict(type=f'{here}.DeclaredEvaluator', benchmark=self.name),
            )
            for task in tasks or self.tasks
            for size in sizes or self.sizes
        ]

    def demo_datasets(self, path: str) -> list[dict]:
        return self.configs(f'{path}/{self.name}', self.demo_sizes or self.sizes)


def dataset_config(
    dataset: dict, reader_cfg: dict, prompt, cut: Optional[str], max_out_len: int, evaluator: dict
) -> dict:
    """One OpenCompass dataset config as every benchmark here runs it: ``dataset`` (its class
    and arguments), the prompt (a string, one user turn; or OpenCompass's template) in a
    ``LongContextPromptTemplate`` whose middle cut may shorten field ``cut`` only, zero-shot,
    generation up to ``max_out_len`` tokens, scored by ``evaluator`` on the model's reply. Classes
    are named by import path, which OpenCompass resolves and dumps as an imported class."""
    template = (
        dict(round=[dict(role='HUMAN', prompt=prompt)]) if isinstance(prompt, str) else prompt
    )
    return dict(
        **dataset,
        reader_cfg=reader_cfg,
        infer_cfg=dict(
            prompt_template=dict(
                type='opencompass_lveval.prompt_template.LongContextPromptTemplate',
                template=template,
                cut=cut,
            ),
            retriever=dict(type='opencompass.openicl.icl_retriever.ZeroRetriever'),
            inferencer=dict(
                type='opencompass.openicl.icl_inferencer.GenInferencer', max_out_len=max_out_len
            ),
        ),
        eval_cfg=dict(evaluator=evaluator, pred_role='BOT'),
    )


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
