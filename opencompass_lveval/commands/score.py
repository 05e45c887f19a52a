"""``lveval score``: score official-format prediction files like the official evaluation.py.

For predictions made outside OpenCompass (or by the official scripts): the same metrics, the
same table, written to ``PRED_DIR/eval_result/``, and as light to start as the official script.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        'score',
        help='score official-format prediction files {dataset}_{level}.jsonl like the '
        'official evaluation.py; writes PRED_DIR/eval_result/',
    )
    parser.add_argument('pred_dir')
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(pred_dir=args.pred_dir)


def run(*, pred_dir: str) -> int:
    from ..lveval.score import score_and_write

    print('\n'.join(score_and_write(pred_dir)))
    return 0
