"""``lveval data check`` and ``lveval data synth``: the data folders themselves.

``check`` reads every data file of each benchmark found (or asked for) once and says what differs
from the official release (record counts, schema, encoding) before a run meets it; ``synth`` has
every benchmark write small seeded data in its official formats, for demos and tests without the
release.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..framework import benchmarks


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser('data', help='check or synthesise data folders')
    data_commands = parser.add_subparsers(dest='data_command', required=True)
    check_parser = data_commands.add_parser(
        'check',
        help=f'read every data file of {benchmarks.titles()} under FOLDER once: record '
        'counts against the official ones, schema and encoding problems',
    )
    check_parser.add_argument('folder')
    from ..framework.datacheck import AUTO

    registered = benchmarks.registered()
    check_parser.add_argument(
        '--benchmark',
        choices=[AUTO] + [b.name for b in registered],
        default=AUTO,
        help=f'auto: every benchmark whose files are there ({registered[0].title} when none is)',
    )
    check_parser.set_defaults(handler=_handle_check)
    synth_parser = data_commands.add_parser(
        'synth',
        help=f'write seeded synthetic data of {benchmarks.titles()} in their official formats '
        '(demos, tests)',
    )
    synth_parser.add_argument('out_dir')
    for flag, options in synth_flags().items():
        synth_parser.add_argument(flag, **options)
    synth_parser.add_argument('--seed', type=int, default=0)
    synth_parser.set_defaults(handler=_handle_synth)


def synth_flags() -> dict[str, dict]:
    """Every benchmark's ``data synth`` arguments, a flag shared by two declared once (by the
    first registered)."""
    flags: dict[str, dict] = {}
    for benchmark in benchmarks.registered():
        for flag, options in benchmark.synth_arguments:
            flags.setdefault(flag, options)
    return flags


def _handle_check(args: argparse.Namespace) -> int:
    return check(folder=args.folder, benchmark=args.benchmark)


def _handle_synth(args: argparse.Namespace) -> int:
    options = {name: value for name, value in vars(args).items() if name not in _NOT_SYNTH}
    return synth(out_dir=args.out_dir, seed=args.seed, **options)


_NOT_SYNTH = {'command', 'data_command', 'handler', 'out_dir', 'seed'}


def check(*, folder: str, benchmark: str) -> int:
    from ..framework.datacheck import check_data_folder

    lines, ok = check_data_folder(folder, benchmark)
    print('\n'.join(lines))
    return 0 if ok else 1


def synth(*, out_dir: str, seed: int, **options) -> int:
    """Every benchmark's synthetic data; each gets the ``options`` it declares (argparse names),
    its defaults for those not given."""
    for benchmark in benchmarks.registered():
        own = {}
        for flag, declared in benchmark.synth_arguments:
            name = declared.get('dest') or flag.lstrip('-').replace('-', '_')
            own[name] = options.get(name, synth_flags()[flag].get('default'))
        print(benchmark.write_synthetic(Path(out_dir), seed=seed, **own))
    return 0
