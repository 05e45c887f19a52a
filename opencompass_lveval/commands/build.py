"""``lveval build``: build benchmark data, seeded, in the official formats.

Every benchmark contributes its kinds (``Benchmark.build_kinds``: LV-Eval's needle in books,
context mixing and replica; Ada-LEval's TSort and BestAnswer); each kind names its arguments and
the library function they go to, by keyword. The command prints every file written and the time
taken.
"""

from __future__ import annotations

import argparse
import time

from ..framework.benchmarks import BuildKind


def kinds(warn: bool = False) -> dict[str, BuildKind]:
    """Every benchmark's kinds by name. A name two benchmarks give is the first registered's:
    an outside benchmark never replaces a kind of the package's (``warn``: say so, naming its
    distribution)."""
    import sys

    from ..framework import benchmarks

    found: dict[str, BuildKind] = {}
    owners: dict[str, str] = {}
    for benchmark in benchmarks.registered():
        for name, kind in benchmark.build_kinds().items():
            if name not in found:
                found[name], owners[name] = kind, benchmark.title
                continue
            plugin = benchmarks.plugin_of(benchmark)
            if warn and plugin is not None:
                problem = f'gives the build kind {name!r}, which {owners[name]} has'
                message = plugin.message(problem, 'Rename it in', 'that kind is left out')
                print(f'warning: {message}', file=sys.stderr)
    return found


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser('build', help='build benchmark data (seeded, official formats)')
    kind_parsers = parser.add_subparsers(dest='kind', required=True)
    for name, kind in kinds(warn=True).items():
        kind_parser = kind_parsers.add_parser(name, help=kind.help)
        for flag, options in kind.arguments:
            kind_parser.add_argument(flag, **options)
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return run(kind=args.kind, **{name: getattr(args, name) for name in kinds()[args.kind].names})


def run(*, kind: str, **options) -> int:
    """Build one kind from its options (keywords, as ``kinds()[kind].names``); print each file
    written and the time taken."""
    start = time.perf_counter()
    paths = kinds()[kind].build(**options)
    for path in paths:
        print(f'wrote {path}')
    print(f'{len(paths)} files in {time.perf_counter() - start:.1f} s')
    return 0
