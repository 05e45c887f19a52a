"""``lveval compare``: is model A better than model B? A paired bootstrap per dataset and size.

Two runs (or one run, twice, with two models) are read as a leaderboard reads them; for every
cell both were evaluated on with the same records (paired by which record of which data file each
is), the difference of the means with its 95% percentile bootstrap interval and whether it
excludes zero, and the same for each level's Overall, with the records behind each; cells on other
records, or whose records repeat, are refused, with the reason, and cells with too few records or
a zero-width interval get no verdict. A result whose score is not the mean of its per-record
scores is named; a model measured on synthetic data is labelled so. Exits 1 when no cell could be
compared.
"""

from __future__ import annotations

import argparse
from typing import Optional

from .arguments import COUNT


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'compare',
        help='paired bootstrap of the difference between two models, per dataset and size and '
        "for each level's Overall, where both were evaluated on the same records",
    )
    parser.add_argument('run_a', help='work folder (-w) or run folder of model A')
    parser.add_argument('run_b', help='work folder or run folder of model B (may be RUN_A)')
    parser.add_argument('--model-a', help='model abbr in RUN_A (needed when it holds several)')
    parser.add_argument('--model-b', help='model abbr in RUN_B (needed when it holds several)')
    parser.add_argument('--resamples', type=COUNT, default=1000, help='default 1000')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--out', help='folder for comparison.md and comparison.csv')
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(
        run_a=args.run_a,
        run_b=args.run_b,
        model_a=args.model_a,
        model_b=args.model_b,
        resamples=args.resamples,
        seed=args.seed,
        out=args.out,
    )


def pick_row(path: str, model: Optional[str], flag: str):
    """The measured row of ``model`` in the runs at ``path`` (its only one when not given)."""
    from ..files.errors import ReportError
    from ..leaderboard.board import measured_rows
    from ..leaderboard.runs import read_runs

    rows = [row for row in measured_rows(read_runs([path])) if row.results]
    if not rows:
        raise ReportError(
            f'{path}: no model has results there (its runs have no result files of a benchmark: '
            'the evaluation did not finish?); give a work or run folder with results'
        )
    chosen = [row for row in rows if model in (None, row.model, row.label)]
    if len(chosen) != 1:
        labels = ', '.join(row.label for row in rows) or 'none'
        wanted = f'no model {model!r}' if model and not chosen else 'several models'
        raise ReportError(f'{path}: {wanted} with results (it has: {labels}); pick one with {flag}')
    return chosen[0]


def shown_label(row) -> str:
    """A row's label, marked where it was measured on synthetic data (as reports and boards)."""
    from ..report.tables import SYNTHETIC, synthetic_label

    return synthetic_label(row.label) if row.kind == SYNTHETIC else row.label


def synthetic_lines(*rows) -> list[str]:
    """The report's synthetic-data line, where A or B was measured on ``lveval data synth``'s
    data."""
    from ..report.results import synthetic_note
    from ..report.tables import SYNTHETIC

    synthetic = list(dict.fromkeys(row.label for row in rows if row.kind == SYNTHETIC))
    return [synthetic_note(synthetic)] if synthetic else []


def run(
    *,
    run_a: str,
    run_b: str,
    model_a: Optional[str] = None,
    model_b: Optional[str] = None,
    resamples: int = 1000,
    seed: int = 0,
    out: Optional[str] = None,
) -> int:
    import sys
    from pathlib import Path

    from ..leaderboard.compare import HEADER, MIN_RECORDS, compare_rows
    from ..report.tables import Table
    from ..report.writers import to_markdown, write_csv

    row_a, row_b = pick_row(run_a, model_a, '--model-a'), pick_row(run_b, model_b, '--model-b')
    found = compare_rows(row_a, row_b, resamples, seed)
    table = Table(
        f'A = {shown_label(row_a)} ({run_a}), B = {shown_label(row_b)} ({run_b}); paired '
        f'bootstrap over records, {resamples:,} resamples, seed {seed}; low, high: the 95% '
        'percentile bootstrap interval of A - B',
        'comparison',
        HEADER,
        [c.cells + [c.verdict] for c in found],
    )
    lines = synthetic_lines(row_a, row_b) + [to_markdown(table)]
    lines += [note for c in found for note in c.notes]
    print('\n'.join(lines))
    compared = [c for c in found if c.compared]
    unclaimed = [c for c in compared if c.verdict.startswith('no verdict')]
    if unclaimed:
        print(
            f'{len(unclaimed)} of {len(compared)} compared cells give no verdict: too few records '
            f'(under {MIN_RECORDS}) or an interval of zero width; see the verdict column'
        )
    if out:
        from ..files.atomic import write_text

        write_text(Path(out) / 'comparison.md', '\n'.join(lines) + '\n')
        write_csv(table, Path(out) / 'comparison.csv')
        print(f'wrote {Path(out) / "comparison.md"} and {Path(out) / "comparison.csv"}')
    if not compared:
        print(
            'nothing could be compared: every cell was refused (see the verdict column)',
            file=sys.stderr,
        )
        return 1
    return 0
