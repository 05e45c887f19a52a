"""The OpenCompass dataset and evaluator every ``DeclaredBenchmark`` shares: the dataset reads one
cell's JSON-lines file (its fingerprint recorded), the evaluator scores each record with the
benchmark's ``score_reply`` (every declared metric; ``score_record`` where that is what it
defines) and keeps the record's metrics, answer depth and per-record factor values in the
details, with each factor value's means and the result's provenance. Configs name the benchmark
by its name; the registry finds it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Optional

import pyarrow as pa
from opencompass.openicl.icl_evaluator import BaseEvaluator
from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET

from ..files.columnar import FINGERPRINT_COLUMN, ORIGIN_COLUMN, ColumnarDataset
from ..report.provenance import provenance
from . import benchmarks
from .factors import factor_means
from .grid import DEPTH, SCORE

# What ``ColumnarDataset`` adds to a data file's columns.
ADDED_COLUMNS = frozenset({'subdivision', 'idx', FINGERPRINT_COLUMN, ORIGIN_COLUMN})


@LOAD_DATASET.register_module()
class DeclaredDataset(ColumnarDataset):
    """One cell (task, size) of a declared benchmark, from ``path``: its ``data_file``."""

    @staticmethod
    def read_table(
        benchmark: str, task: str, size: str, path: Optional[str] = None
    ) -> tuple[pa.Table, str, bool]:
        declared = benchmarks.named(benchmark)
        file = declared.data_path(path or '.', task, size)
        records = declared.read_records(file, task)
        canonical = json.dumps(records, sort_keys=True, ensure_ascii=False).encode()
        fingerprint = hashlib.sha1(canonical).hexdigest()[:16]
        return pa.Table.from_pylist(records), fingerprint, benchmarks.is_synthetic(file.parent)


@ICL_EVALUATORS.register_module()
class DeclaredEvaluator(BaseEvaluator):
    """The mean of each declared metric over the records (percent); per record, its headline
    score (under ``score``), its other metrics (each under its name) and its answer depth in the
    details. The benchmark's scorer sees each record as its data file holds it."""

    def __init__(self, benchmark: str, pred_postprocessor=None) -> None:
        super().__init__(pred_postprocessor=pred_postprocessor)
        self.benchmark = benchmarks.named(benchmark)

    def score(self, predictions: list, references: list, test_set) -> dict:
        if len(predictions) != len(references):
            return {'error': f'{len(predictions)} predictions for {len(references)} references'}
        declared = self.benchmark
        field = declared.depth_field
        depths = test_set[field] if field else [None] * len(references)
        records = [_data_record(row) for row in test_set] if len(test_set) else []
        found = [declared.record_metrics(str(p), r) for p, r in zip(predictions, records)]
        headline = declared.headline_metric
        others = [metric for metric in declared.metrics if metric != headline]
        means = {
            m: sum(f[m] for f in found) / len(found) if found else 0.0 for m in declared.metrics
        }
        per_metric = {m: [f[m] for f in found] for m in declared.metrics}
        factors = [f for f in declared.factors if f.per_record]
        return {
            **means,
            **factor_means(factors, per_metric, records),
            'provenance': provenance(test_set),
            'details': [
                {
                    'pred': p,
                    'answer': r,
                    SCORE: f[headline],
                    **{m: f[m] for m in others},
                    DEPTH: d,
                    **{factor.name: factor.record_value(record) for factor in factors},
                }
                for p, r, f, d, record in zip(predictions, references, found, depths, records)
            ],
        }


def _data_record(row: dict) -> dict:
    """A dataset row as its data file held it: the columns the dataset adds left out."""
    return {key: value for key, value in row.items() if key not in ADDED_COLUMNS}
