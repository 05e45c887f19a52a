"""``lveval report``: per-length tables and plots from an OpenCompass work folder.

Long-context results are read by length; this writes them so (Markdown, CSV, PNG) from what a
run has already written, without running anything again.
"""

from __future__ import annotations

import argparse
from typing import Optional


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'report',
        help='per-length tables (Markdown, CSV) and plots (PNG) from an existing '
        'OpenCompass work folder, without re-running anything',
    )
    parser.add_argument('work_dir', help='the -w folder of a run, or one of its run folders')
    parser.add_argument('--out', help="where to write (default: the run's summary/ folder)")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(work_dir=args.work_dir, out=args.out)


def run(*, work_dir: str, out: Optional[str] = None) -> int:
    from ..report import write_report

    written = write_report(work_dir, out)
    print(next(p for p in written if p.suffix == '.md').read_text(encoding='utf-8'))
    for path in written:
        print(f'wrote {path}')
    return 0
