"""``lveval score-adaleval``: extract and judge Ada-LEval responses made anywhere.

Each response gets its answer extracted (strict, or the official code's reading) and judged
against the gold answer; the scored lines go beside the file and the rates to stdout as one JSON
line, so that scripts can read them.
"""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers) -> None:
    from ..adaleval.tasks import TASKS_BY_NAME

    parser = subparsers.add_parser(
        'score-adaleval',
        help='extract and judge Ada-LEval responses (JSON lines with '
        '"prediction", "answer", and "num_choice" for BestAnswer); writes '
        'FILE.scored.jsonl and prints the rates as one JSON line',
    )
    parser.add_argument('--task', choices=sorted(TASKS_BY_NAME), required=True)
    parser.add_argument('--extraction', choices=['strict', 'official'], default='strict')
    parser.add_argument('file')
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(file=args.file, task=args.task, extraction=args.extraction)


def run(*, file: str, task: str, extraction: str) -> int:
    import json

    from ..adaleval.score import score_file

    out, summary = score_file(file, task, extraction)
    print(json.dumps(summary))
    print(f'wrote {out}', file=sys.stderr)
    return 0
