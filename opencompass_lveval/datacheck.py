"""``lveval data check``: read a data folder once and report every file, for either benchmark.

LV-Eval: the 55 official subsets (missing ones reported, record counts against the release) and
any found at other levels, reported as non-official. Ada-LEval: every paper file (counts against
what the official code uses) and any other setting found. Each file is read as a run would read
it, so a problem shows here before any model is loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

BENCHMARKS = ('auto', 'lveval', 'adaleval')


def _has_adaleval_files(root: Path) -> bool:
    from .adaleval.tasks import TASKS

    stems = tuple(f'{task.file_stem}_' for task in TASKS)
    return any(
        name.startswith(stems) and name.endswith('.json')
        for _, _, files in os.walk(root)
        for name in files
    )


def _lveval_lines(root: Path) -> tuple[list[str], bool]:
    from .errors import DataError
    from .lveval.data import GET_DATA_HINT, check_folder

    reports = list(check_folder(root))
    if not reports:
        raise DataError(
            f'{root} holds no LV-Eval subsets ({{dataset}}_{{level}}.jsonl files or the official '
            f'zips). {GET_DATA_HINT}'
        )
    width = max(len(r.subset) for r in reports)
    lines = [f'{"LV-Eval subset":<{width}}  records/expected  status']
    for report in reports:
        status = (
            ('ok' if report.official else 'ok (non-official level)')
            if report.ok
            else report.problem
        )
        expected = report.expected if report.official else '-'
        lines.append(f'{report.subset:<{width}}  {report.records:>7}/{expected:<8}  {status}')
    if not reports:
        raise DataError(
            f'{root} holds no LV-Eval subsets ({{dataset}}_{{level}}.jsonl or the '
            f'official zips). {GET_DATA_HINT}'
        )
    official = [r for r in reports if r.official]
    missing = sum(r.source is None for r in official)
    bad = [r for r in reports if not r.ok]
    extra = len(reports) - len(official)
    summary = (
        f'{len(official) - sum(not r.ok for r in official)} of {len(official)} official '
        f'subsets ok, {missing} missing'
        if official
        else 'no subset at an official level'
    )
    lines.append(
        f'{summary}, {len(bad) - missing} with problems'
        + (f'; {extra} at non-official levels' if extra else '')
    )
    if missing:
        lines.append(GET_DATA_HINT)
    return lines, not bad


def _adaleval_lines(root: Path) -> tuple[list[str], bool]:
    from .adaleval.data import GET_DATA_HINT, check_folder

    reports = list(check_folder(root))
    width = max(len(r.name) for r in reports)
    lines = [f'{"Ada-LEval file":<{width}}  records/used  status']
    for report in reports:
        expected = report.expected if report.expected is not None else '-'
        status = (
            ('ok' if report.expected is not None else 'ok (non-paper setting)')
            if report.ok
            else report.problem
        )
        lines.append(f'{report.name:<{width}}  {report.records:>7}/{expected:<5}  {status}')
    missing = sum(r.problem == 'missing' for r in reports)
    bad = sum(not r.ok for r in reports)
    lines.append(
        f'{len(reports) - bad} of {len(reports)} Ada-LEval files ok, {missing} missing, '
        f'{bad - missing} with problems'
    )
    if missing:
        lines.append(GET_DATA_HINT)
    return lines, bad == 0


def check_data_folder(folder: str | os.PathLike, benchmark: str = 'auto') -> tuple[list[str], bool]:
    """The report's lines and whether everything is in order. ``auto`` checks Ada-LEval when the
    folder holds its files and LV-Eval otherwise, or both when it holds both."""
    from .errors import DataError

    root = Path(folder)
    if not root.is_dir():
        raise DataError(f'{root} is not a folder; give the folder that holds the data files')
    if benchmark not in BENCHMARKS:
        raise ValueError(f'benchmark must be one of {BENCHMARKS}, not {benchmark!r}')
    checks = []
    if benchmark == 'auto':
        from .lveval.data import find_subsets

        has_ada = _has_adaleval_files(root)
        if find_subsets(root) or not has_ada:
            checks.append(_lveval_lines)
        if has_ada:
            checks.append(_adaleval_lines)
    else:
        checks.append({'lveval': _lveval_lines, 'adaleval': _adaleval_lines}[benchmark])
    lines, ok = [], True
    for check in checks:
        part, part_ok = check(root)
        lines += part
        ok = ok and part_ok
    return lines, ok
