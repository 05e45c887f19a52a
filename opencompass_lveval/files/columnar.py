"""An OpenCompass dataset base that stays in Arrow columns.

OpenCompass's ``BaseDataset`` adds ``subdivision`` and ``idx`` with a per-row Python ``map``, which
re-encodes every long context; here they are appended as Arrow columns. The data's fingerprint
(a digest of its content, taken while it was read) is Hugging Face ``datasets``' cache key instead
of a hash of the whole table, and a ``data_fingerprint`` column, so evaluators can record in each
result which data it came from; a ``data_origin`` column says ``synthetic`` for the data of
``lveval data synth``, so that reports and leaderboards can say so.
"""

from __future__ import annotations

from typing import Optional

import pyarrow as pa
from datasets import Dataset, concatenate_datasets
from datasets.table import InMemoryTable
from opencompass.datasets.base import BaseDataset

FINGERPRINT_COLUMN = 'data_fingerprint'
ORIGIN_COLUMN = 'data_origin'
SYNTHETIC = 'synthetic'


class ColumnarDataset(BaseDataset):
    """Subclasses implement ``read_table(**kwargs) -> (pa.Table, content fingerprint, synthetic)``,
    ``synthetic`` true for a folder ``lveval data synth`` wrote."""

    @staticmethod
    def read_table(**kwargs) -> tuple[pa.Table, str, bool]:
        raise NotImplementedError

    def __init__(self, reader_cfg: Optional[dict] = None, k=1, n: int = 1, **kwargs) -> None:
        abbr = kwargs.pop('abbr', 'dataset')
        table, fingerprint, synthetic = self.read_table(**kwargs)
        rows = table.num_rows
        table = table.append_column('subdivision', pa.array([abbr] * rows, pa.string()))
        table = table.append_column('idx', pa.array(range(rows), pa.int64()))
        table = table.append_column(FINGERPRINT_COLUMN, pa.array([fingerprint] * rows, pa.string()))
        origin = SYNTHETIC if synthetic else 'files'
        table = table.append_column(ORIGIN_COLUMN, pa.array([origin] * rows, pa.string()))
        dataset = Dataset(InMemoryTable(table), fingerprint=f'{fingerprint}-{abbr}')
        self.dataset = concatenate_datasets([dataset] * n) if n > 1 else dataset
        self._init_reader(**(reader_cfg or {}))

    @classmethod
    def load(cls, **kwargs) -> Dataset:
        table, fingerprint, _ = cls.read_table(**kwargs)
        return Dataset(InMemoryTable(table), fingerprint=fingerprint)
