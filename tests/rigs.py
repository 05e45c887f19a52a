"""tools/rig.py as the cluster tests use it: its node names, a call of it, why it cannot start
here, the processes of its nodes, and the wait for something to happen on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest
from runs import REPO

RIG = REPO / 'tools' / 'rig.py'
HEAD = 'lvhead'  # where the driver runs; work runs on the compute nodes
COMPUTE = ('lvnode1', 'lvnode2', 'lvnode3')
SLURM_OPT_IN = 'LVEVAL_TEST_SLURM'
SLURM_NOT_WANTED = (
    'Slurm is not installed, and installing it (apt, a munge key) is opt-in: '
    f'{SLURM_OPT_IN}=1 (CI sets CI=true)'
)


def rig(*argv: str, cwd=None, env=None, timeout: float = 300, check: bool = True):
    done = subprocess.run(
        [sys.executable, str(RIG), *argv], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    if check:
        assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    return done


def unavailable() -> Optional[str]:
    """Why the rig cannot start here, or None."""
    if os.geteuid() != 0:
        return 'the rig needs root (network namespaces, mounts, daemons): python3 tools/rig.py up'
    for tool in ('ip', 'nsenter', 'unshare'):
        if not shutil.which(tool):
            return f'{tool} is not installed'
    try:
        import ray  # noqa: F401
    except ImportError:
        return 'ray is not installed: pip install "opencompass_lveval[ray]"'
    return None


def slurm_wanted() -> bool:
    """Slurm joins the rig where it is installed; the rig installs it (apt, a munge key) only
    where asked to change the machine: in CI, or with LVEVAL_TEST_SLURM=1."""
    return bool(shutil.which('slurmctld') or os.environ.get('CI') or os.environ.get(SLURM_OPT_IN))


def skip_unless_possible(reason: Optional[str]) -> None:
    """Skip, saying why, where the rig cannot start; in CI, which runs the cluster tests, fail."""
    if reason:
        if os.environ.get('CI'):
            pytest.fail(f'CI runs the cluster tests, but {reason}')
        pytest.skip(reason)


def command_lines() -> list[str]:
    """The command line of every process on this machine, arguments joined by spaces (the rig's
    nodes included: this machine sees every node's process table)."""
    found = []
    for cmdline in Path('/proc').glob('[0-9]*/cmdline'):
        try:
            found.append(cmdline.read_bytes().replace(b'\0', b' ').decode())
        except OSError:
            continue
    return found


def wait_for(find, timeout: float, what: str, process: Optional[subprocess.Popen] = None):
    """What ``find`` returns once it is truthy, polled; an error after ``timeout`` seconds, or at
    once where ``process`` (the driver) ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = find()
        if found:
            return found
        if process is not None and process.poll() is not None:
            raise AssertionError(f'the driver ended first: {process.stdout.read()[-3000:]}')
        time.sleep(0.3)
    raise AssertionError(f'not within {timeout} s: {what}')
