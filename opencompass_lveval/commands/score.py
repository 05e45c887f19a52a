"""``lveval score [--benchmark NAME] PATH [...]``: predictions in a benchmark's official layout,
scored as its official code scores them.

Each benchmark declares its scorer (``Benchmark.official_scorer``: its arguments and the function
taking them; several, each named, where it has several); this command finds it by name and
passes it the rest of the command line. Without ``--benchmark`` it is the first registered
benchmark's (LV-Eval's: ``lveval score PRED_DIR``). ``--benchmark`` may stand before or after
the scorer's own arguments.
"""

from __future__ import annotations

import argparse


class _ScorerParser(argparse.ArgumentParser):
    """A scorer's own arguments: a bad one is a ValueError naming it (``lveval`` prints it as one
    ``error:`` line and exits 2)."""

    def error(self, message: str):
        raise ValueError(f'{self.prog}: {message} (see lveval score --help)')


def scorers() -> dict:
    """Name -> official scorer of every registered benchmark's, in order; a name two give is the
    first registered's."""
    from ..framework import benchmarks

    found: dict = {}
    for benchmark in benchmarks.registered():
        for name, scorer in benchmark.official_scorers().items():
            found.setdefault(name, scorer)
    return found


def _shown(flag: str, options: dict) -> str:
    """One argument as a usage line shows it: ``PRED_DIR``, ``--out OUT``, ``[--limit LIMIT]``."""
    if not flag.startswith('-'):
        return options.get('metavar') or flag.upper()
    value = options.get('metavar') or flag.lstrip('-').replace('-', '_').upper()
    shown = flag if options.get('action') in ('store_true', 'store_false') else f'{flag} {value}'
    return shown if options.get('required') else f'[{shown}]'


def usage(name: str, scorer) -> str:
    """``--benchmark NAME ARGUMENTS``: a scorer's command line, as its help shows it."""
    parts = [_shown(flag, options) for flag, options in scorer.arguments]
    return ' '.join([f'--benchmark {name}', *parts])


def add_parser(subparsers) -> None:
    found = scorers()
    default = next(iter(found), None)
    lines = [f'  {usage(name, scorer)}\n      {scorer.help}' for name, scorer in found.items()]
    parser = subparsers.add_parser(
        'score',
        help="score predictions in a benchmark's official layout as its official code does "
        f'(default {default}: {found[default].help})'
        if default
        else "score predictions in a benchmark's official layout",
        description="Score predictions in a benchmark's official layout as its official code "
        'does: the scorer of --benchmark NAME (default: the first registered with one) takes '
        'the rest of the command line.',
        epilog='official scorers:\n' + '\n'.join(lines) + '\n' if lines else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        '--benchmark', help=f'whose scorer (default: {default}; known: {", ".join(found)})'
    )
    parser.add_argument(
        'arguments', nargs=argparse.REMAINDER, metavar='PATH ...', help="the scorer's arguments"
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    first = _ScorerParser(prog='lveval score', add_help=False)
    first.add_argument('--benchmark')
    later, rest = first.parse_known_args(args.arguments)  # a --benchmark after the path
    return run(benchmark=later.benchmark or args.benchmark, arguments=rest)


def run(*, benchmark, arguments: list[str]) -> int:
    """Parse ``arguments`` with the scorer of ``benchmark`` (None: the default), score, print
    the lines it returns."""
    found = scorers()
    name = benchmark or next(iter(found), None)
    if name not in found:
        known = ', '.join(found) or 'none is registered'
        raise ValueError(f'no official scorer for benchmark {name!r}; known: {known}')
    scorer = found[name]
    parser = _ScorerParser(prog=f'lveval score --benchmark {name}', description=scorer.help)
    for flag, options in scorer.arguments:
        parser.add_argument(flag, **options)
    parsed = parser.parse_args(arguments)
    lines = scorer.function()(**{key: getattr(parsed, key) for key in scorer.names})
    print('\n'.join(lines))
    return 0
