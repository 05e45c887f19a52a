"""Leaderboard refreshes: any number of runs merged with the papers' published numbers.

``runs.py`` reads run folders (results, dumped configs, task logs), ``board.py`` merges them into
rows (one per model and settings, newest result per dataset, missing results with their first
error line, conflicts), ``published.py`` merges the papers' numbers, each benchmark turns the rows
into its tables (its ``report`` module), ``writers.py`` and ``html.py`` write Markdown, CSV, JSON
and a self-contained page.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from ..atomic import write_text
from ..intervals import RESAMPLES, SEED
from .board import Board, build_board
from .html import page
from .runs import read_runs
from .writers import board_tables, markdown, write_csv, write_json


def write_leaderboard(
    paths: list,
    out: str | Path,
    with_published: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    include_synthetic: bool = False,
) -> tuple[Board, list[Path]]:
    """Read the runs, build the board (intervals from ``resamples`` seeded resamples), write
    ``leaderboard.{md,csv,json,html}`` into ``out``."""
    board = build_board(read_runs(paths), with_published, resamples, seed, include_synthetic)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    generated = datetime.now().isoformat(sep=' ', timespec='seconds')
    written = [out / f'leaderboard.{kind}' for kind in ('md', 'csv', 'json', 'html')]
    tables = board_tables(board)
    write_text(written[0], markdown(board, tables, generated))
    write_csv(board, written[1])
    write_json(board, written[2], generated)
    write_text(written[3], page(board, tables, generated, depth_maps(board)))
    return board, written


def depth_maps(board: Board) -> list:
    """(row label, map) for every measured row's depth maps, from the records each row kept."""
    from .. import benchmarks
    from ..report import extra_metrics, metric_scores

    maps = []
    for row in board.rows:
        for benchmark in benchmarks.BENCHMARKS:
            found = [
                *row.records.get(benchmark.name, {}).values(),
                *row.variants.get(benchmark.name, {}).values(),
            ]
            results = {r.dataset: r.values for r in found}
            scores = {r.dataset: r.scores for r in found if r.scores}
            depths = {r.dataset: r.depths for r in found if r.depths}
            others = {
                metric: {
                    r.dataset: r.metric_scores[metric] for r in found if metric in r.metric_scores
                }
                for metric in extra_metrics(benchmark)
            }
            found_maps = benchmark.depth_maps(results, scores, depths, **metric_scores(others))
            maps += [(row.label, m) for m in found_maps]
    return maps
