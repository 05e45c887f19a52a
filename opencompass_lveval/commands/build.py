"""``lveval build``: build benchmark data, seeded, in the official formats.

One kind per way of building (LV-Eval's needle in books, context mixing from your own QA items,
a replica of the release from public-domain books; Ada-LEval TSort and BestAnswer at any
budget). ``KINDS`` is the table: each kind's arguments and the library function they go to, by
keyword; the command prints every file written and the time taken.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

LVEVAL_LEVELS = '16k,32k,64k,128k,256k'

Argument = tuple[str, dict]


def _sizes(text: str) -> list[str]:
    from ..sizes import parse_sizes

    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def argument(flag: str, **options) -> Argument:
    """One ``add_argument`` call, as data."""
    return flag, options


@dataclass(frozen=True)
class Kind:
    """One ``lveval build`` kind: its help, its arguments in ``--help`` order, and the function
    taking them as keywords (by their argparse names) that writes the files."""

    help: str
    arguments: tuple[Argument, ...]
    build: Callable[..., list[Path]]

    @property
    def names(self) -> list[str]:
        """The argparse names of the arguments: ``--no-cfi`` is ``no_cfi``."""
        return [flag.lstrip('-').replace('-', '_') for flag, _ in self.arguments]


OUT_AND_SEED = (
    argument('--out', required=True, help='output folder'),
    argument('--seed', type=int, default=0),
)
LEVELS_AND_SCALE = (
    argument(
        '--levels',
        type=_sizes,
        default=LVEVAL_LEVELS.split(','),
        help=f'comma-separated sizes, e.g. 16k,32k,512k,1000k (default: {LVEVAL_LEVELS})',
    ),
    argument('--scale', type=int, default=1, help='divide every length by this (small test data)'),
)


# Each kind's function takes the kind's arguments by their argparse names and passes them to the
# library by keyword, converting only what differs: --out is out_dir, --no-cfi is cfi=False...


def _factrecall(*, out: str, no_cfi: bool, no_kpr: bool, no_context: bool, **options) -> list[Path]:
    from ..lveval.build import build_factrecall

    return build_factrecall(
        out_dir=out, cfi=not no_cfi, kpr=not no_kpr, context=not no_context, **options
    )


def _mixup(
    *, items: str, rules: Optional[str], out: str, no_cfi: bool, no_kpr: bool, **options
) -> list[Path]:
    from ..lveval.build import build_mixup, read_items, read_rules

    return build_mixup(
        items=read_items(items),
        rules=read_rules(rules),
        out_dir=out,
        cfi=not no_cfi,
        kpr=not no_kpr,
        **options,
    )


def _replica(*, out: str, **options) -> list[Path]:
    from ..lveval.build import build_replica

    def progress(name: str) -> None:
        print(f'building {name}', flush=True)

    return build_replica(out_dir=out, progress=progress, **options)


def _tsort(*, out: str, **options) -> list[Path]:
    from ..adaleval.build import build_tsort

    return [build_tsort(out_dir=out, **options)]


def _bestanswer(*, out: str, **options) -> list[Path]:
    from ..adaleval.build import build_bestanswer

    return [build_bestanswer(out_dir=out, **options)]


KINDS = {
    'factrecall': Kind(
        help="the papers' needle in a haystack of books",
        arguments=(
            argument('--language', choices=['en', 'zh'], required=True),
            argument('--corpora', required=True, help='folder with en/ and zh/ books'),
            argument('--count', type=int, default=200, help='needle positions per level'),
            argument('--no-cfi', action='store_true', help='without confusing facts'),
            argument('--no-kpr', action='store_true', help='without keyword replacement'),
            argument(
                '--no-context',
                action='store_true',
                help='empty contexts: the knowledge-leakage probe',
            ),
            *OUT_AND_SEED,
            *LEVELS_AND_SCALE,
        ),
        build=_factrecall,
    ),
    'mixup': Kind(
        help='LV-Eval context mixing from your own QA items',
        arguments=(
            argument(
                '--items',
                required=True,
                help='JSON lines: input, answers, documents, [answer_keywords, confusing_facts]',
            ),
            argument('--dataset', required=True, help='output name: {dataset}_{level}.jsonl'),
            argument('--language', choices=['en', 'zh'], required=True),
            argument('--rules', help='JSON {original: substitute} or [[original, substitute]]'),
            argument('--no-cfi', action='store_true'),
            argument('--no-kpr', action='store_true'),
            *OUT_AND_SEED,
            *LEVELS_AND_SCALE,
        ),
        build=_mixup,
    ),
    'replica': Kind(
        help='all 55 LV-Eval subsets shaped like the release, from public-domain books',
        arguments=(argument('--corpora', required=True), *OUT_AND_SEED, *LEVELS_AND_SCALE),
        build=_replica,
    ),
    'tsort': Kind(
        help='Ada-LEval TSort cases from any books',
        arguments=(
            argument('--books', nargs='+', required=True),
            argument(
                '--setting',
                required=True,
                help='a token budget: 2k, 4k, 8k, 16k, 32k, 64k, 128k or any size from 16k '
                '(256k, 1m)',
            ),
            argument('--count', type=int, default=1000),
            argument(
                '--tokenizer',
                default='cl100k_base',
                help="cl100k_base (the paper's, default), words (an estimate), or a "
                'tokenizer.json / its folder',
            ),
            *OUT_AND_SEED,
        ),
        build=_tsort,
    ),
    'bestanswer': Kind(
        help='Ada-LEval BestAnswer at another budget',
        arguments=(
            argument(
                '--source',
                required=True,
                help='an official-format stackselect file: the questions',
            ),
            argument('--setting', required=True, help='token budget, e.g. 4k or 256k'),
            argument('--tokenizer', default='cl100k_base', help='as for tsort'),
            *OUT_AND_SEED,
        ),
        build=_bestanswer,
    ),
}


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser('build', help='build benchmark data (seeded, official formats)')
    kinds = parser.add_subparsers(dest='kind', required=True)
    for name, kind in KINDS.items():
        kind_parser = kinds.add_parser(name, help=kind.help)
        for flag, options in kind.arguments:
            kind_parser.add_argument(flag, **options)
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(kind=args.kind, **{name: getattr(args, name) for name in KINDS[args.kind].names})


def run(*, kind: str, **options) -> int:
    """Build one kind from its options (keywords, as ``KINDS[kind].names``); print each file
    written and the time taken."""
    start = time.perf_counter()
    paths = KINDS[kind].build(**options)
    for path in paths:
        print(f'wrote {path}')
    print(f'{len(paths)} files in {time.perf_counter() - start:.1f} s')
    return 0
