"""``lveval data check`` and ``lveval data synth``: the data folders themselves.

``check`` reads every data file of each benchmark found (or asked for) once and says what differs
from the official release (record counts, schema, encoding) before a run meets it; ``synth`` has
every benchmark write small seeded data in its official formats, for demos and tests without the
release.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .arguments import COUNT, SCALE


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser('data', help='check or synthesise data folders')
    data_commands = parser.add_subparsers(dest='data_command', required=True)
    check_parser = data_commands.add_parser(
        'check',
        help='read every LV-Eval subset or Ada-LEval file under FOLDER once: record '
        'counts against the official ones, schema and encoding problems',
    )
    check_parser.add_argument('folder')
    from .. import benchmarks
    from ..datacheck import AUTO

    check_parser.add_argument(
        '--benchmark',
        choices=[AUTO] + [b.name for b in benchmarks.BENCHMARKS],
        default=AUTO,
        help='auto: every benchmark whose files are there (LV-Eval when none is)',
    )
    check_parser.set_defaults(handler=_handle_check)
    synth_parser = data_commands.add_parser(
        'synth',
        help='write seeded synthetic data: all 55 LV-Eval subsets and a few Ada-LEval '
        'settings (demos, tests)',
    )
    synth_parser.add_argument('out_dir')
    synth_parser.add_argument(
        '--count', type=COUNT, default=4, help='records per subset (default 4)'
    )
    synth_parser.add_argument(
        '--scale',
        type=SCALE,
        default=100,
        help='divide the level lengths by this (default 100: 16k -> 160 words)',
    )
    synth_parser.add_argument('--seed', type=int, default=0)
    synth_parser.set_defaults(handler=_handle_synth)


def _handle_check(args: argparse.Namespace) -> int:
    return check(folder=args.folder, benchmark=args.benchmark)


def _handle_synth(args: argparse.Namespace) -> int:
    return synth(out_dir=args.out_dir, count=args.count, scale=args.scale, seed=args.seed)


def check(*, folder: str, benchmark: str) -> int:
    from ..datacheck import check_data_folder

    lines, ok = check_data_folder(folder, benchmark)
    print('\n'.join(lines))
    return 0 if ok else 1


def synth(*, out_dir: str, count: int, scale: int, seed: int) -> int:
    from .. import benchmarks

    for benchmark in benchmarks.BENCHMARKS:
        print(benchmark.write_synthetic(Path(out_dir), count=count, scale=scale, seed=seed))
    return 0
