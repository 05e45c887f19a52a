"""A benchmark whose data the framework also handles: ``DeclaredBenchmark``.

It is a ``GridBenchmark`` (``grid.py``: cells, averages, summary groups, report, leaderboard) that
says in addition what its records are: one JSON-lines file per cell (``data_file``), each line a
record with the prompt's fields, the answer and, where the benchmark places answers, the answer's
depth (0-1 of the context); its prompt; how to score one record and make synthetic ones. The
framework supplies the rest: data check and synthetic files, the dataset and evaluator classes
with provenance (``declared_opencompass.py``) and the OpenCompass dataset configs
(``dataset_config``, the shape every benchmark's configs take). The repository's examples hold a
complete one.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Optional, Union

from ..report.rounding import counted
from .benchmarks import mark_synthetic
from .grid import GridBenchmark


class DeclaredBenchmark(GridBenchmark):
    """A grid benchmark whose data, OpenCompass dataset, evaluator and configs the framework
    supplies: one JSON-lines file per cell, one score per record."""

    demo_sizes: tuple[str, ...] = ()  # what ``lveval data synth`` writes (default: ``sizes``)
    demo_count: int = 10  # records per cell of the synthetic data
    data_file: str = '{task}_{size}.jsonl'  # a cell's JSON-lines file ({task}, {size} filled)
    input_fields: tuple[str, ...] = ('context', 'input')  # the prompt's fields
    answer_field: str = 'answer'  # the record's answer: OpenCompass's reference
    prompt: str = '{context}\n\n{input}'  # one user turn, the input fields filled in
    cut: Optional[str] = 'context'  # the field a middle cut may shorten
    max_out_len: int = 32  # generation length, in the model's tokens
    depth_bins = None  # its depth maps' rows: the distinct positions of its data (``grid.py``)

    @property
    def result_metrics(self) -> tuple[str, ...]:
        """What its evaluator reports: ``metrics``."""
        return self.metrics

    @property
    def board_metrics(self) -> tuple[str, ...]:
        """What a leaderboard keeps: ``metrics``."""
        return self.metrics

    # What it states as code: scoring one record and making synthetic ones -----------------------
    # A benchmark defines one of ``score_reply`` (the whole record, any number of metrics) and
    # ``score_record`` (the answer only, the headline only); registration refuses neither.

    def score_reply(self, reply: str, record: dict) -> Union[float, Mapping[str, float]]:
        """One record's scores in percent: ``{metric: value}`` for every metric in ``metrics``
        (a bare number where the headline is its only metric). ``record`` is the data file's
        record as read (every field, the answer's included), ``reply`` the model's reply. The
        default scores the answer field with ``score_record``."""
        return self.score_record(reply, record[self.answer_field])

    def score_record(self, prediction: str, answer) -> float:
        """One record's headline score in percent, from its answer alone (the older, shorter
        form of ``score_reply``)."""
        raise NotImplementedError(
            f'{type(self).__name__} defines neither score_reply nor score_record'
        )

    def record_metrics(self, reply: str, record: dict) -> dict[str, float]:
        """``score_reply`` checked: every declared metric, each a number from 0 to 100; anything
        else is one error naming the benchmark, the record's values and the fix."""
        found = self.score_reply(reply, record)
        if not isinstance(found, Mapping):
            found = {self.headline_metric: found}
        wanted = list(self.metrics)
        if sorted(found) != sorted(wanted) or not all(
            _is_percent(found[metric]) for metric in wanted
        ):
            raise ValueError(
                f'{type(self).__name__}.score_reply gave {dict(found)!r}; it must give each of '
                f'{wanted} (its `metrics`) as a number from 0 to 100'
            )
        return {metric: float(found[metric]) for metric in wanted}

    @abstractmethod
    def synthetic_records(self, task: str, size: str, count: int, seed: int) -> list[dict]:
        """``count`` seeded records of one cell, in the data file's format."""

    # Registration ------------------------------------------------------------------------------

    def check_declaration(self) -> list[str]:
        """The grid's checks, then its own: a scorer, a data file per cell."""
        where, problems = type(self).__name__, super().check_declaration()
        own = type(self)
        if own.score_reply is DeclaredBenchmark.score_reply:
            if own.score_record is DeclaredBenchmark.score_record:
                problems.append(
                    f'{where} defines no scorer: define score_reply(reply, record) (every '
                    'metric of one record) or score_record(prediction, answer) (the headline)'
                )
            elif len(self.metrics) > 1:
                problems.append(
                    f'{where}.score_record gives the headline only, but metrics has '
                    f'{len(self.metrics)}: define score_reply(reply, record) returning each'
                )
        return problems or self._data_file_problems(where)

    def _data_file_problems(self, where: str) -> list[str]:
        try:
            self.data_file.format(task='t', size='s')
        except (AttributeError, IndexError, KeyError, ValueError) as exc:
            return [
                f'{where}.data_file {self.data_file!r} cannot be filled ({type(exc).__name__}: '
                f'{exc}): only {{task}} and {{size}} are filled in'
            ]
        needed = ['{size}'] + (['{task}'] if len(set(self.tasks)) > 1 else [])
        lacking = [field for field in needed if field not in self.data_file]
        if lacking:
            return [
                f'{where}.data_file {self.data_file!r} lacks {" and ".join(lacking)}: every '
                'cell needs a file of its own'
            ]
        return []

    # Cells and data ----------------------------------------------------------------------------

    def data_path(self, folder, task: str, size: str) -> Path:
        """A cell's data file in ``folder``."""
        return Path(folder) / self.data_file.format(task=task, size=size)

    def _data_files(self, root: Path) -> list[tuple[str, Path]]:
        """(task, file) of every data file of its tasks at any size directly in ``root``."""
        found = []
        for task in self.tasks:
            pattern = self.data_file.format(task=task, size='*')
            found += [(task, path) for path in sorted(root.glob(pattern)) if path.is_file()]
        return found

    @property
    def data_looked_for(self) -> str:
        files = ' or '.join(
            dict.fromkeys(self.data_file.format(task=t, size='{size}') for t in self.tasks)
        )
        return f'{files} files'

    def has_data(self, root: Path) -> bool:
        return any(self._data_files(root / self.name)) or any(self._data_files(root))

    def read_records(self, path: Path, task: Optional[str] = None) -> list[dict]:
        """A data file's records (of ``task``, whose per-record factors each record must give
        one of their values); a bad line is an error naming the file, the line and the fix."""
        from ..files.errors import DataError
        from ..files.jsonl import json_objects

        required = (*self.input_fields, self.answer_field)
        if not path.is_file():
            raise DataError(
                f'{path} is missing; write it with `lveval data synth FOLDER` (or the '
                f"benchmark's `lveval build`), or point the dataset's path at its folder"
            )
        factors = [f for f in self.factors if task in f.record_tasks(self.tasks)]
        records = []
        for where, record in json_objects(path, required, DataError):
            for factor in factors:
                if factor.record_value(record) not in factor.shown_values():
                    raise DataError(
                        f'{where}: field "{factor.record_field}" ({factor.word}) is '
                        f'{record.get(factor.record_field)!r}, not one of '
                        f'{", ".join(factor.shown_values())}; give each record one'
                    )
            records.append(record)
        return records

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        from ..files.errors import DataError

        folder = root / self.name if self._data_files(root / self.name) else root
        lines, ok = [f'{self.title} file  records  status'], True
        for task, path in self._data_files(folder):
            try:
                records, status = len(self.read_records(path, task)), 'ok'
            except DataError as exc:
                records, status, ok = 0, str(exc), False
            lines.append(f'{path.name}  {records}  {status}')
        if len(lines) == 1:
            lines.append(f'no {self.title} files ({self.data_file}) in {folder}')
        return lines, ok and len(lines) > 1

    def write_synthetic(self, out_dir: Path, *, seed: int, **options) -> str:
        import json

        from ..files.atomic import atomic_open

        folder = Path(out_dir) / self.name
        folder.mkdir(parents=True, exist_ok=True)
        for task in self.tasks:
            for size in self.demo_sizes or self.sizes:
                records = self.synthetic_records(task, size, self.demo_count, seed)
                with atomic_open(self.data_path(folder, task, size)) as stream:
                    stream.writelines(json.dumps(r, ensure_ascii=False) + '\n' for r in records)
        mark_synthetic(folder)
        cells = len(self.tasks) * len(self.demo_sizes or self.sizes)
        each = counted(self.demo_count, 'record')
        return f'wrote {cells} {self.title} files ({each} each) to {folder}'

    # OpenCompass configs -------------------------------------------------------------------------

    def cell_fields(self, task: str, size: str) -> dict:
        return {'abbr': self.abbr(task, size), 'benchmark': self.name, 'task': task, 'size': size}

    def cell_config(self, task: str, size: str, path: str, **dataset) -> dict:
        """The shared dataset and evaluator of declared benchmarks; ``dataset`` adds keys
        (``limit``)."""
        here = 'opencompass_lveval.framework.declared_opencompass'
        return dataset_config(
            dict(
                type=f'{here}.DeclaredDataset', **self.cell_fields(task, size), path=path, **dataset
            ),
            dict(input_columns=list(self.input_fields), output_column=self.answer_field),
            self.prompt,
            self.cut,
            self.max_out_len,
            dict(type=f'{here}.DeclaredEvaluator', benchmark=self.name),
        )

    def demo_datasets(self, path: str) -> list[dict]:
        return self.configs(f'{path}/{self.name}', self.demo_sizes or self.sizes)


def _is_percent(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 100


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
                type='opencompass_lveval.prompts.prompt_template.LongContextPromptTemplate',
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
