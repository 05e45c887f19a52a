"""The OpenCompass dataset for LV-Eval subsets, built on ``data.py``'s one-pass reader."""
from __future__ import annotations

from typing import Optional

import pyarrow as pa
from datasets import Dataset, concatenate_datasets
from datasets.table import InMemoryTable
from opencompass.datasets.base import BaseDataset

from . import data
from .tasks import split_subset


def read_table(name: str, path: Optional[str] = None, source: str = 'local',
               cache_dir: Optional[str] = None) -> tuple[pa.Table, str]:
    """One subset as an Arrow table, with a fingerprint for Hugging Face ``datasets``."""
    task, _ = split_subset(name)
    if source == 'hf':
        subset_source = data.locate_in_zip(data.download_from_hub(task.name, cache_dir), name)
    elif source == 'local':
        subset_source = data.locate(path or data.default_data_dir(), name)
    else:
        raise ValueError(f"LVEvalDataset source must be 'local' or 'hf', not {source!r}")
    return data.read_subset(subset_source), subset_source.fingerprint()


class LVEvalDataset(BaseDataset):
    """One LV-Eval subset (``name='cmrc_mixup_16k'``) from a local folder, zips, or the hub.

    Columns: ``answers``, ``answer_keywords``, ``input``, ``context``. ``path`` is a folder searched
    at any depth for ``{name}.jsonl`` or the official ``{dataset}.zip``; ``source='hf'`` downloads
    the dataset's zip from the Hugging Face hub instead (a plain file download, never remote code).
    """

    def __init__(self, reader_cfg: Optional[dict] = None, k=1, n: int = 1, **kwargs) -> None:
        # BaseDataset adds `subdivision` and `idx` with a per-row Python map, which re-encodes every
        # 128k-word context; Arrow columns give OpenCompass the same two fields at no cost.
        abbr = kwargs.pop('abbr', 'dataset')
        table, fingerprint = read_table(**kwargs)
        rows = table.num_rows
        table = table.append_column('subdivision', pa.array([abbr] * rows, pa.string()))
        table = table.append_column('idx', pa.array(range(rows), pa.int64()))
        # OpenCompass fills the prompt by replacing `{column}` for every column in order; the
        # context goes last so text inside it that looks like `{idx}` or `{input}` stays literal.
        order = [name for name in table.column_names if name not in ('input', 'context')]
        dataset = Dataset(InMemoryTable(table.select(order + ['input', 'context'])),
                          fingerprint=f'{fingerprint}-{abbr}')
        self.dataset = concatenate_datasets([dataset] * n) if n > 1 else dataset
        self._init_reader(**(reader_cfg or {}))

    @staticmethod
    def load(**kwargs) -> Dataset:
        table, fingerprint = read_table(**kwargs)
        return Dataset(InMemoryTable(table), fingerprint=fingerprint)
