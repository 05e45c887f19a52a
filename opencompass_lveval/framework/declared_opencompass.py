"""The OpenCompass dataset and evaluator every ``DeclaredBenchmark`` shares: the dataset reads one
cell's JSON-lines file (its fingerprint recorded), the evaluator scores each record with the
benchmark's ``score_record`` and keeps its score and answer depth in the details, with the
result's provenance. Configs name the benchmark by its name; the registry finds it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Optional

import pyarrow as pa
from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET

from ..files.columnar import ColumnarDataset
from ..report.provenance import provenance
from . import benchmarks
from .grid import DEPTH, SCORE


@LOAD_DATASET.register_module()
class DeclaredDataset(ColumnarDataset):
    """One cell (task, size) of a declared benchmark, from ``path``: its ``data_file``."""

    @staticmethod
    def read_table(
        benchmark: str, task: str, size: str, path: Optional[str] = None
    ) -> tuple[pa.Table, str, bool]:
        declared = benchmarks.named(benchmark)
        file = declared.data_path(path or '.', task, size)
        records = declared.read_records(file)
        canonical = json.dumps(records, sort_keys=True, ensure_ascii=False).encode()
        fingerprint = hashlib.sha1(canonical).hexdigest()[:16]
        return pa.Table.from_pylist(records), fingerprint, benchmarks.is_synthetic(file.parent)


@ICL_EVALUATORS.register_module()
class DeclaredEvaluator(BaseEvaluator):
    """The mean per-record score (percent) as the headline metric, each record's score and
    answer depth in the details."""

    def __init__(self, benchmark: str, pred_postprocessor=None) -> None:
        super().__init__(pred_postprocessor=pred_postprocessor)
        self.benchmark = benchmarks.named(benchmark)

    def score(self, predictions: list, references: list, test_set) -> dict:
        if len(predictions) != len(references):
            return {'error': f'{len(predictions)} predictions for {len(references)} references'}
        declared = self.benchmark
        field = declared.depth_field
        depths = test_set[field] if field else [None] * len(references)
        scores = [declared.score_record(str(p), r) for p, r in zip(predictions, references)]
        return {
            declared.headline_metric: sum(scores) / len(scores) if scores else 0.0,
            'provenance': provenance(test_set),
            'details': [
                {'pred': p, 'answer': r, SCORE: s, DEPTH: d}
                for p, r, s, d in zip(predictions, references, scores, depths)
            ],
        }
