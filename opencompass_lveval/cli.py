"""The ``lveval`` command: check, synthesise and build data, score predictions, dry-run configs
and report per-length results, for every registered benchmark.

This module only builds the top-level parser and dispatches; each subcommand is a module of
``opencompass_lveval.commands`` that adds its own parser and imports what it needs when it runs,
so ``lveval --help`` and the commands that need no model (score, report, data, build) start
without OpenCompass or torch.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .commands import (
    build,
    compare,
    configs_dir,
    data,
    dry_run,
    inputs,
    leaderboard,
    report,
    score,
)

# In the order of ``lveval --help``; the benchmarks' own commands come after ``score``.
BEFORE, AFTER = [configs_dir, data, score], [report, build, dry_run, inputs, leaderboard, compare]


class UsageError(Exception):
    """A command line argparse refused; ``main`` prints it as one line and exits 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one ``error: ...`` line naming the command, the
    argument and the fix (every subcommand's parser is of this class)."""

    def error(self, message: str):
        raise UsageError(f'{self.prog}: {message} (see {self.prog} --help)')


def build_parser() -> argparse.ArgumentParser:
    from .framework import benchmarks

    description = __doc__.split('\n\n')[0].replace(
        'every registered benchmark', benchmarks.titles()
    )
    parser = _Parser(prog='lveval', description=description)
    parser.add_argument('--version', action='version', version=f'%(prog)s {__version__}')
    subparsers = parser.add_subparsers(dest='command', required=True)

    # The package's benchmarks' commands come after ``score``; outside benchmarks' come last, so
    # that one taking a command's name is the one left out (with a warning naming it).
    builtin = [b for b in benchmarks.registered() if benchmarks.plugin_of(b) is None]
    outside = [b for b in benchmarks.registered() if benchmarks.plugin_of(b) is not None]
    for command in BEFORE:
        command.add_parser(subparsers)
    for benchmark in builtin:
        benchmarks.add_commands(benchmark, subparsers)
    for command in AFTER:
        command.add_parser(subparsers)
    for benchmark in outside:
        benchmarks.add_commands(benchmark, subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .files.errors import BenchmarkError

    try:
        args = build_parser().parse_args(argv)
    except (UsageError, BenchmarkError) as exc:  # a bad command line, or a benchmark's package
        print(f'error: {exc}', file=sys.stderr)
        return 2
    try:
        return args.handler(args)
    except (ValueError, OSError) as exc:  # DataError, ReportError, a missing file...
        print(f'error: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
