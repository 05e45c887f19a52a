"""The OpenCompass dataset for Ada-LEval: the official prompts, optional position-bias variants."""

from __future__ import annotations

import hashlib
import json
from typing import Optional

import pyarrow as pa
from opencompass.registry import LOAD_DATASET

from ..files.columnar import ColumnarDataset
from ..framework.benchmarks import is_synthetic
from .data import default_data_dir, load_task, locate
from .tasks import task_named

# The prompt's parts as columns, joined by the configs' template '{instruction}{body}{closing}',
# which marks the body as what a middle cut may shorten.
PROMPT_PARTS = ('instruction', 'body', 'closing')


@LOAD_DATASET.register_module()
class AdaLEvalDataset(ColumnarDataset):
    """One Ada-LEval task at one setting: columns ``answer``, ``num_choice`` and the prompt in
    three parts, ``instruction``, ``body`` and ``closing`` (joined, the official prompt).

    ``task`` names a row of the task table ('bestanswer', 'tsort'); ``path`` is a folder holding
    the official files at any depth; ``cheap`` uses the paper's smaller sample counts; ``position``
    ('front', 'middle', 'rear', where the task has the variant) moves the accepted answer there;
    ``limit`` takes the first records only.
    """

    @staticmethod
    def read_table(
        task: str,
        setting: str,
        path: Optional[str] = None,
        cheap: bool = False,
        position: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> tuple[pa.Table, str, bool]:
        row = task_named(task)
        if position is not None and position not in row.positions:
            raise ValueError(f'{task} has no position {position!r}; it has {list(row.positions)}')
        samples = [
            row.sample(record, position) for record in load_task(task, setting, path, cheap, limit)
        ]
        columns = {
            'answer': [s.answer for s in samples],
            'num_choice': [s.num_choice for s in samples],
            **{part: [getattr(s, part) for s in samples] for part in PROMPT_PARTS},
        }
        content = hashlib.sha1(usedforsecurity=False)  # what the model sees and is scored on
        for sample in samples:
            content.update(json.dumps([sample.prompt, sample.answer, sample.num_choice]).encode())
        synthetic = is_synthetic(locate(path or default_data_dir(), row, setting).parent)
        return pa.table(columns), content.hexdigest(), synthetic
