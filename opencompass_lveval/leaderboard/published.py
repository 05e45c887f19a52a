"""The papers' published results, shipped with the package as data with their source.

``data/published_lveval.csv``: the LV-Eval README's "Overall Result" table (model x level: the
unweighted mean of the 11 datasets) and its per-dataset tables, plus the 16k-only per-dataset
numbers of Qwen2-72B-Instruct from ``info/SOTA_model_performance.md``. ``data/published_adaleval.csv``:
the Ada-LEval README's accuracy per task, model and setting. Copied byte for byte from the
project's reference files (a test checks them against ../shared/reference where it is present);
each benchmark reads its own file (its ``published``), this module merges them per model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

DATA = Path(__file__).resolve().parent / 'data'


@dataclass
class PublishedRow:
    """One model's published numbers, per benchmark and (task, size), every number with the
    source it was taken from."""

    model: str
    sources: set[str] = field(default_factory=set)
    results: dict[str, dict[tuple[str, str], dict[str, float]]] = field(default_factory=dict)


def number(text: str) -> Optional[float]:
    """A published cell: a number, or None where the paper prints none."""
    return float(text) if text.strip() else None


def published_rows() -> list[PublishedRow]:
    """Every published model, in the order the benchmarks and their papers list them."""
    from ..framework import benchmarks

    rows: dict[str, PublishedRow] = {}
    for benchmark in benchmarks.BENCHMARKS:
        for model, source, cell, values in benchmark.published():
            row = rows.setdefault(model, PublishedRow(model))
            row.sources.add(source)
            row.results.setdefault(benchmark.name, {})[cell] = values
    return list(rows.values())
