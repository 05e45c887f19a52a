"""``lveval data check``: read a data folder once and report every file, for every benchmark
whose files are there (or the one asked for). Each file is read as a run would read it, so a
problem shows here before any model is loaded; what is checked is each benchmark's own
(``Benchmark.check_data``).
"""

from __future__ import annotations

import os
from pathlib import Path

AUTO = 'auto'


def check_data_folder(folder: str | os.PathLike, benchmark: str = AUTO) -> tuple[list[str], bool]:
    """The report's lines and whether everything is in order. ``auto`` checks every benchmark
    whose files the folder holds, or the first registered one (which then says what it lacks)."""
    from . import benchmarks
    from .errors import DataError

    root = Path(folder)
    if not root.is_dir():
        raise DataError(f'{root} is not a folder; give the folder that holds the data files')
    if benchmark == AUTO:
        chosen = [b for b in benchmarks.BENCHMARKS if b.has_data(root)]
        chosen = chosen or list(benchmarks.BENCHMARKS[:1])
    else:
        chosen = [benchmarks.named(benchmark)]
    lines, ok = [], True
    for found in chosen:
        part, part_ok = found.check_data(root)
        lines += part
        ok = ok and part_ok
    return lines, ok
