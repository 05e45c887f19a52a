"""``lveval leaderboard``: merge OpenCompass runs into one leaderboard.

Results of several runs (and, on request, the papers' published numbers) become one table in
Markdown, CSV, JSON and a self-contained HTML page, each row saying where it comes from; what
was asked for but is missing or conflicts is printed, and with ``--strict`` fails the command.
"""

from __future__ import annotations

import argparse

from .arguments import COUNT


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'leaderboard',
        help='merge OpenCompass runs (work folders or run folders) into one leaderboard: '
        'Markdown, CSV, JSON and a self-contained HTML page, with provenance and missing results',
    )
    parser.add_argument('runs', nargs='+', help='work folders (-w) or run folders')
    parser.add_argument('--out', required=True, help='folder for leaderboard.{md,csv,json,html}')
    parser.add_argument(
        '--published',
        action='store_true',
        help="add the papers' published numbers as reference rows",
    )
    parser.add_argument(
        '--strict',
        action='store_true',
        help='exit 1 when any asked-for result is missing or conflicts, or nothing was measured '
        '(no result on real data: only published rows or rows on synthetic data)',
    )
    parser.add_argument(
        '--resamples',
        type=COUNT,
        default=1000,
        help='bootstrap resamples for the 95%% intervals (default 1000)',
    )
    parser.add_argument('--seed', type=int, default=0, help='seed of the resamples (default 0)')
    parser.add_argument(
        '--include-synthetic',
        action='store_true',
        help='rank rows measured on synthetic data (lveval data synth) among the measured rows; '
        'by default they come last, after the published rows, labelled "(synthetic data)"',
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        runs=args.runs,
        out=args.out,
        published=args.published,
        strict=args.strict,
        resamples=args.resamples,
        seed=args.seed,
        include_synthetic=args.include_synthetic,
    )


def run(
    *,
    runs: list[str],
    out: str,
    published: bool = False,
    strict: bool = False,
    resamples: int = 1000,
    seed: int = 0,
    include_synthetic: bool = False,
) -> int:
    from ..leaderboard import write_leaderboard
    from ..report.tables import MEASURED, PUBLISHED, SYNTHETIC

    board, written = write_leaderboard(runs, out, published, resamples, seed, include_synthetic)
    counts = {kind: sum(row.kind == kind for row in board.rows) for kind in (MEASURED, SYNTHETIC)}
    published_rows = sum(row.kind == PUBLISHED for row in board.rows)
    print(
        f'{counts[MEASURED]} measured rows, {published_rows} published rows, '
        f'{counts[SYNTHETIC]} rows on synthetic data'
        + (' (ranked last; --include-synthetic ranks them)' if counts[SYNTHETIC] else '')
        + f', sizes: {board.shown_sizes()}'
    )
    for model, dataset, why in board.missing:
        print(f'missing: {model} x {dataset}: {why}')
    for label, note in board.conflicts:
        print(f'conflict: {label}: {note}')
    for path in written:
        print(f'wrote {path}')
    unmeasured = nothing_measured(board)
    if unmeasured:
        print(unmeasured + ('; --strict fails on it' if strict else ''))
    return 1 if strict and (board.missing or board.conflicts or unmeasured) else 0


def nothing_measured(board) -> str:
    """Why no model was measured, or '' where some row holds a result on real data. Rows on
    synthetic data test the pipeline, published rows are the papers': neither measures a model."""
    from .. import benchmarks
    from ..tables import MEASURED, SYNTHETIC

    real = [row for row in board.rows if row.kind == MEASURED]
    if any(row.results for row in real):
        return ''
    synthetic = sum(row.kind == SYNTHETIC for row in board.rows)
    if synthetic:
        return (
            f'nothing measured: the {synthetic} rows with results were measured on synthetic data '
            '(lveval data synth), which tests the pipeline, not a model'
        )
    if real:
        names = ', '.join(b.name for b in benchmarks.BENCHMARKS)
        return (
            f'nothing measured: no row holds a result of a registered benchmark ({names}); '
            'the runs hold other results or none'
        )
    return 'nothing measured: the runs hold no results and asked for none'
