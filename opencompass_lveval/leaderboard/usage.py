"""What each leaderboard row cost to run, per benchmark and level: the usage totals the infer task
keeps beside each dataset's predictions (``report/usage.py``), for the results the row shows."""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Optional

from .. import benchmarks
from ..report.results import dataset_of
from ..report.usage import INFERENCE_SUFFIX, UsageTotal, merge, read_inference_record
from ..tables import BoardLine, BoardTable


def result_usage(run: Path, model: str, dataset: str) -> Optional[UsageTotal]:
    """The totals of one dataset of one run (all its parts: ``{abbr}.inference.json`` or
    ``{abbr}_N.inference.json``), or None where none were kept."""
    found = None
    folder = run / 'predictions' / model
    for record in sorted(folder.glob(f'{glob.escape(dataset)}*{INFERENCE_SUFFIX}')):
        if dataset_of(record.name.removesuffix(INFERENCE_SUFFIX)) != dataset:
            continue  # another dataset whose name starts alike
        total = read_inference_record(record)
        if total is not None and total.records:
            found = found or UsageTotal()
            merge(found, total)
    return found


def add_usage(usage: dict, dataset: str, total: UsageTotal) -> None:
    """``total`` into a row's ``usage`` (benchmark name -> size -> totals)."""
    for benchmark in benchmarks.BENCHMARKS:
        cell = benchmark.split_abbr(dataset)
        if cell is not None:
            merge(usage.setdefault(benchmark.name, {}).setdefault(cell[1], UsageTotal()), total)
            return


def tokens_per_s(total: UsageTotal) -> Optional[float]:
    tokens = total.prompt_tokens + total.completion_tokens
    return round(tokens / total.wall_s, 1) if total.wall_s else None


def usage_board_tables(rows: list) -> list[BoardTable]:
    """Per benchmark with any usage: tokens (millions, the cost in USD beside them where a config
    gave prices) and throughput (tokens per second of inference wall time), per level."""
    tables = []
    for benchmark in benchmarks.BENCHMARKS:
        used = [row for row in rows if row.usage.get(benchmark.name)]
        sizes = benchmark.level_order({size for row in used for size in row.usage[benchmark.name]})
        if not used:
            continue

        by_row = {id(row): _row_totals(row, benchmark.name, sizes) for row in used}
        header = sizes + ['all']
        tables.append(
            BoardTable(
                f'{benchmark.name}-tokens',
                f'{benchmark.title}: tokens used (millions; USD beside them where priced)',
                header,
                [
                    BoardLine(
                        row,
                        [_millions(t) for t in by_row[id(row)]],
                        notes=[t.cost_usd if t is not None else None for t in by_row[id(row)]],
                    )
                    for row in used
                ],
                note_label='USD',
                note='Prompt and completion tokens of the results shown, from the usage record '
                "beside each prediction: an API server's own count, or the ids an in-process "
                'model received and generated.',
            )
        )
        tables.append(
            BoardTable(
                f'{benchmark.name}-throughput',
                f'{benchmark.title}: tokens per second of inference',
                header,
                [
                    BoardLine(row, [tokens_per_s(t) if t else None for t in by_row[id(row)]])
                    for row in used
                ],
                note="Prompt and completion tokens over the wall time of each dataset's "
                'inference (GPUs as the model config asked).',
            )
        )
    return tables


def _row_totals(row, name: str, sizes: list[str]) -> list[Optional[UsageTotal]]:
    """A row's totals at each size (None where it has none), then over all of them."""
    cells = [row.usage[name].get(size) for size in sizes]
    everything = UsageTotal()
    for total in cells:
        if total is not None:
            merge(everything, total)
    return cells + [everything]


def usage_json(row) -> dict:
    """A row's usage for leaderboard.json: benchmark -> size -> totals."""
    return {
        name: {size: vars(total) for size, total in sorted(cells.items())}
        for name, cells in row.usage.items()
    }


def _millions(total: Optional[UsageTotal]) -> Optional[float]:
    if total is None:
        return None
    return round((total.prompt_tokens + total.completion_tokens) / 1e6, 4)
