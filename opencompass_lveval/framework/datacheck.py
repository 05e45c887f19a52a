"""``lveval data check``: read a data folder once and report every file, for every benchmark
whose files are there (or the one asked for). Each file is read as a run would read it, so a
problem shows here before any model is loaded; what is checked is each benchmark's own
(``Benchmark.check_data``). Only regular files are read; a FIFO or device is listed as skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

AUTO = 'auto'


def check_data_folder(folder: str | os.PathLike, benchmark: str = AUTO) -> tuple[list[str], bool]:
    """The report's lines and whether everything is in order. ``auto`` checks every benchmark
    whose files the folder holds; where none has any, the error says what each looks for."""
    from ..files.errors import DataError
    from . import benchmarks

    root = Path(folder)
    if not root.is_dir():
        raise DataError(f'{root} is not a folder; give the folder that holds the data files')
    if benchmark == AUTO:
        chosen = [b for b in benchmarks.BENCHMARKS if b.has_data(root)]
        if not chosen:
            raise DataError(_no_data(root, benchmarks.BENCHMARKS))
    else:
        chosen = [benchmarks.named(benchmark)]
    lines, ok = skipped_files(root), True  # only regular files are read
    for found in chosen:
        part, part_ok = found.check_data(root)
        lines += part
        ok = ok and part_ok
    return lines, ok


def _no_data(root: Path, registered) -> str:
    looked_for = '; '.join(
        f'{b.title}: {b.data_looked_for or "its data files"}' for b in registered
    )
    return (
        f'{root} holds the data of no benchmark (looked for: {looked_for}). '
        'Point at the folder that holds them, or write demo data with `lveval data synth FOLDER`'
    )


def folder_from_env(variable: str, default: str, error: type[Exception]) -> str:
    """The data folder ``$variable`` names, or ``default`` when it is unset. Set but empty is an
    error (an empty path is the current folder, whose stray files would be read)."""
    value = os.environ.get(variable)
    if value is None:
        return default
    if not value.strip():
        raise error(
            f'${variable} is set but empty; set it to the data folder, or unset it to read '
            f'{default}'
        )
    return value


def shown(root: str | os.PathLike) -> str:
    """A folder as given and, when relative, where that is: what errors name as the folder read."""
    root = Path(root)
    return str(root) if root.is_absolute() else f'{root} ({root.resolve()})'


def walk_regular(root: str | os.PathLike) -> Iterator[tuple[Path, list[str]]]:
    """``os.walk`` keeping only regular files (or links to them): a FIFO, socket or device is
    never opened, so nothing blocks on it."""
    for folder, _, files in os.walk(root):
        yield Path(folder), [name for name in sorted(files) if (Path(folder) / name).is_file()]


def skipped_files(root: str | os.PathLike) -> list[str]:
    """What ``walk_regular`` leaves out under ``root``, each with what it is."""
    skipped = []
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            path = Path(folder) / name
            if not path.is_file():
                try:
                    mode = path.stat().st_mode
                except OSError:
                    kind = 'a broken link'
                else:
                    kind = next((k for test, k in _KINDS if test(mode)), 'not a regular file')
                skipped.append(f'skipped {path}: {kind}, not a regular file')
    return skipped


_KINDS = (
    (stat.S_ISFIFO, 'a FIFO'),
    (stat.S_ISSOCK, 'a socket'),
    (stat.S_ISCHR, 'a character device'),
    (stat.S_ISBLK, 'a block device'),
)
