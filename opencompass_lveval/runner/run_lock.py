"""One driver per run folder: a second ``opencompass`` on the same folder (``-r`` twice, or two
terminals) would run every task again beside the first and interleave their journals.

The driver holds an exclusive ``flock`` on ``{run folder}/logs/driver.lock`` for as long as its
process lives, and writes its host and pid into the file. The kernel (or, on NFS, the lock
manager) releases the lock when the process dies, however it dies: a driver that ends empties the
file, and one that was killed leaves its name there, which the next driver takes over, saying
so; a live one refuses the second driver, naming the holder. Where
the file system keeps no locks (NFS mounted ``nolock``), the file's host and pid decide: a dead
pid on this host is taken over, a live one or another host's refuses.

The lock file is the one file written in place: the lock belongs to the file's inode, which a
rename would replace.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import os
import socket
import time
from pathlib import Path

_HELD: dict[str, int] = {}  # resolved lock path -> its open descriptor, for the process's life


class RunFolderInUseError(RuntimeError):
    """Another live driver holds the run folder."""


def lock_path(work_dir: str | os.PathLike) -> Path:
    return Path(work_dir).resolve() / 'logs' / 'driver.lock'


def _holder(descriptor: int) -> str:
    os.lseek(descriptor, 0, os.SEEK_SET)
    return os.read(descriptor, 4096).decode('utf-8', 'replace').strip()


def _alive_here(holder: str) -> bool | None:
    """Whether the driver a lock file names runs: True or False for one of this host, None for
    another host's (its pid means nothing here)."""
    fields = dict(zip(holder.split()[::2], holder.split()[1::2]))
    if fields.get('host') != socket.gethostname() or not fields.get('pid', '').isdigit():
        return None if fields.get('host') else False
    try:
        os.kill(int(fields['pid']), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def hold_run_folder(work_dir: str | os.PathLike) -> None:
    """Hold ``work_dir``'s driver lock for the rest of this process (again: nothing to do), or
    raise ``RunFolderInUseError`` naming the driver that holds it."""
    path = lock_path(work_dir)
    if str(path) in _HELD:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        earlier = _holder(descriptor)
    except OSError as exc:
        earlier = _holder(descriptor)
        alive = True if exc.errno in (errno.EAGAIN, errno.EACCES) else _alive_here(earlier)
        if alive is not False:
            os.close(descriptor)
            holder = earlier or 'its lock names no holder'
            raise RunFolderInUseError(
                f'{Path(work_dir)} is in use by another driver ({holder}; lock {path}): two '
                'drivers on one run folder run every task twice. Let '
                'it finish (or stop it) first, or run in another work folder; if no driver runs '
                f'there any more, delete {path}'
            ) from None
    if earlier:
        from opencompass.utils import get_logger

        get_logger().warning(f'{path}: taken over from a driver that ended ({earlier})')
    os.ftruncate(descriptor, 0)
    os.lseek(descriptor, 0, os.SEEK_SET)
    stamp = time.strftime('%Y-%m-%dT%H:%M:%S')
    os.write(descriptor, f'host {socket.gethostname()} pid {os.getpid()} since {stamp}\n'.encode())
    _HELD[str(path)] = descriptor
    atexit.register(_release, str(path))


def hold_for(tasks: list) -> None:
    """``hold_run_folder`` for a stage's tasks (their ``work_dir``), as a runner's launch calls
    it; a folder in use stops the run (``SystemExit``) naming the driver that holds it."""
    if tasks:
        try:
            hold_run_folder(tasks[0]['work_dir'])
        except RunFolderInUseError as exc:
            raise SystemExit(f'RunFolderInUseError: {exc}') from None


def _release(path: str) -> None:
    """At the driver's normal end: the file emptied (a next driver finds no one to take over
    from), then the lock let go."""
    descriptor = _HELD.pop(path, None)
    if descriptor is not None:
        os.ftruncate(descriptor, 0)
        os.close(descriptor)
