"""Ada-LEval's own commands: ``lveval score-adaleval`` (responses made anywhere, extracted
strictly or as the official code reads them and judged; the scored lines beside the file, the
rates as one JSON line) and its ``lveval build`` kinds (TSort from any books, BestAnswer at any
budget). Heavy imports happen when a command runs."""

from __future__ import annotations

import sys
from pathlib import Path

from ..commands.arguments import COUNT, SIZE
from ..framework.benchmarks import BUILD_OUTPUT, BuildKind, argument


def _tsort(*, out: str, **options) -> list[Path]:
    from .build import build_tsort

    return [build_tsort(out_dir=out, **options)]


def _bestanswer(*, out: str, **options) -> list[Path]:
    from .build import build_bestanswer

    return [build_bestanswer(out_dir=out, **options)]


BUILD_KINDS = {
    'tsort': BuildKind(
        help='Ada-LEval TSort cases from any books',
        arguments=(
            argument('--books', nargs='+', required=True),
            argument(
                '--setting',
                type=SIZE,
                required=True,
                help='a token budget: 2k, 4k, 8k, 16k, 32k, 64k, 128k or any size from 16k '
                '(256k, 1m)',
            ),
            argument('--count', type=COUNT, default=1000),
            argument(
                '--tokenizer',
                default='cl100k_base',
                help="cl100k_base (the paper's, default), words (an estimate), or a "
                'tokenizer.json / its folder',
            ),
            *BUILD_OUTPUT,
        ),
        build=_tsort,
    ),
    'bestanswer': BuildKind(
        help='Ada-LEval BestAnswer at another budget',
        arguments=(
            argument(
                '--source',
                required=True,
                help='an official-format stackselect file: the questions',
            ),
            argument('--setting', type=SIZE, required=True, help='token budget, e.g. 4k or 256k'),
            argument('--tokenizer', default='cl100k_base', help='as for tsort'),
            *BUILD_OUTPUT,
        ),
        build=_bestanswer,
    ),
}


def add_score_parser(subparsers) -> None:
    from .tasks import TASKS_BY_NAME

    parser = subparsers.add_parser(
        'score-adaleval',
        help='extract and judge Ada-LEval responses (JSON lines with '
        '"prediction", "answer", and "num_choice" for BestAnswer); writes '
        'FILE.scored.jsonl and prints the rates as one JSON line',
    )
    parser.add_argument('--task', choices=sorted(TASKS_BY_NAME), required=True)
    parser.add_argument('--extraction', choices=['strict', 'official'], default='strict')
    parser.add_argument('file')
    parser.set_defaults(
        handler=lambda args: score(file=args.file, task=args.task, extraction=args.extraction)
    )


def score(*, file: str, task: str, extraction: str) -> int:
    import json

    from .score import score_file

    out, summary = score_file(file, task, extraction)
    print(json.dumps(summary))
    print(f'wrote {out}', file=sys.stderr)
    return 0
