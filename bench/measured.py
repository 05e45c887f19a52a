"""One reader timed in a fresh Python, for the loader benches: its wall time and its peak memory
above the process's baseline (``VmHWM`` after resetting it with ``/proc/self/clear_refs``), the
imports of ``setup`` left out of both."""

from __future__ import annotations

import json
import subprocess
import sys

_SCRIPT = r"""
import json, sys, time
{setup}
def status(field):
    for line in open('/proc/self/status'):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
open('/proc/self/clear_refs', 'w').write('5')
base = status('VmRSS')
start = time.perf_counter()
{timed}
print(json.dumps({{'count': count, 'seconds': time.perf_counter() - start,
                  'peak_bytes': status('VmHWM') - base}}))
"""


def measured(setup: str, timed: str, *argv: str) -> dict:
    """``{count, seconds, peak_bytes}`` of one run: ``timed`` (code that sets ``count``) after
    ``setup``, with ``argv`` as ``sys.argv[1:]``."""
    script = _SCRIPT.format(setup=setup, timed=timed)
    out = subprocess.run(
        [sys.executable, '-c', script, *argv], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def best_of(repeat: int, setup: str, timed: str, *argv: str) -> tuple[dict, int]:
    """The fastest of ``repeat`` runs and the highest peak among them."""
    runs = [measured(setup, timed, *argv) for _ in range(repeat)]
    return min(runs, key=lambda run: run['seconds']), max(run['peak_bytes'] for run in runs)
