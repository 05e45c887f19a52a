"""The OpenCompass dataset for LV-Eval subsets, built on ``data.py``'s one-pass reader."""

from __future__ import annotations

from typing import Optional

import pyarrow as pa
from opencompass.registry import LOAD_DATASET

from ..files.columnar import ColumnarDataset
from ..framework.benchmarks import is_synthetic
from . import data
from .tasks import split_subset


@LOAD_DATASET.register_module()
class LVEvalDataset(ColumnarDataset):
    """One LV-Eval subset (``name='cmrc_mixup_16k'``) from a local folder, zips, or the hub.

    Columns: ``answers``, ``answer_keywords``, ``input``, ``context``. ``path`` is a folder searched
    at any depth for ``{name}.jsonl`` or the official ``{dataset}.zip``; ``source='hf'`` downloads
    the dataset's zip from the Hugging Face hub instead (a plain file download, never remote code).
    """

    @staticmethod
    def read_table(
        name: str,
        path: Optional[str] = None,
        source: str = 'local',
        cache_dir: Optional[str] = None,
    ) -> tuple[pa.Table, str, bool]:
        task, _ = split_subset(name)
        if source == 'hf':
            subset_source = data.locate_in_zip(data.download_from_hub(task.name, cache_dir), name)
        elif source == 'local':
            subset_source = data.locate(path or data.default_data_dir(), name)
        else:
            raise ValueError(f"LVEvalDataset source must be 'local' or 'hf', not {source!r}")
        table = data.read_subset(subset_source)
        synthetic = source == 'local' and is_synthetic(subset_source.path.parent)
        return table, data.table_digest(table), synthetic
