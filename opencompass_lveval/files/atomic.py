"""Every file the package writes goes to a temporary name beside its target and is renamed over
it only when complete: a failed or killed command leaves the previous file (or none), never an
empty or half-written one that looks whole."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Optional


def _default_mode() -> int:
    """The permissions a plain ``open`` would give a new file (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_open(
    path: str | os.PathLike, mode: str = 'w', encoding: Optional[str] = 'utf-8', **kwargs
) -> Iterator[IO]:
    """``open(path, mode)`` for writing, renamed into place on success, removed on failure."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f'.{path.name}.', suffix='.part', dir=path.parent
    )
    try:
        binary = 'b' in mode
        with os.fdopen(descriptor, mode, encoding=None if binary else encoding, **kwargs) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, _default_mode())
        os.replace(temporary, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_text(path: str | os.PathLike, text: str, encoding: str = 'utf-8') -> Path:
    with atomic_open(path, 'w', encoding=encoding) as stream:
        stream.write(text)
    return Path(path)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` for writers that take a file name (matplotlib's
    ``savefig``); renamed into place when the block completes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f'.{path.stem}.part{path.suffix}')
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()
