"""What the chosen runners and engines need, checked in the driver before any task starts.

A run whose scheduler or engine is missing would otherwise find out inside every task: Slurm's
``srun`` missing is a ``not found`` in each task log, an unreachable Ray head a hang, vLLM
missing a traceback from inside a replica half a minute in. Here each is one line, within
seconds, with the command that fixes it:

- the engine each model loads with (``LongContextModel.engine_modules``: vLLM, transformers),
  findable by the Python the tasks, or ``ServeOnceRunner``'s replicas, will run (the driver's;
  a Slurm placement's ``python`` setting);
- Slurm (``SlurmRunner`` and its subclasses, a ``'slurm'`` placement): its commands on the
  ``PATH``, its controller answering ``sinfo`` within ``SINFO_TIMEOUT_S``, the partitions the
  runner names among those it lists;
- Ray (``RayRunner``, a ``'ray'`` placement): ``ray`` installed, an address given, and something
  listening there (a TCP connection within ``CONNECT_TIMEOUT_S``; ``connect_ray`` then joins it).

Modules are looked up, not imported (``importlib.util.find_spec``: milliseconds, where importing
vLLM takes 10 s), so a module that is present but fails as it imports still fails in its task.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
from typing import Any, Optional

from opencompass.registry import MODELS, RUNNERS

from .installs import INSTALL

SINFO_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 5.0
RAY_PORT = 6379
_SLURM_FIX = (
    "run it on a Slurm login node, or install Slurm's client (apt-get install slurm-client) with "
    "the cluster's slurm.conf; configs/eval_demo.py runs the same tasks on this machine"
)


def _kind(type_: Any, registry) -> Any:
    return registry.get(type_) if isinstance(type_, str) else type_


def missing_modules(modules: list[str], python: str = sys.executable) -> list[str]:
    """The modules of ``modules`` that ``python`` cannot find (looked up, not imported)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return [m for m in modules if importlib.util.find_spec(m) is None]
    probe = (
        'import importlib.util as u, sys; print(*[m for m in sys.argv[1:] if not u.find_spec(m)])'
    )
    try:
        done = subprocess.run(
            [python, '-c', probe, *modules], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f'{m} ({python} does not run: {exc})' for m in modules]
    return done.stdout.split()


def _serves(runner_cfg: dict) -> bool:
    from .serve_once import ServeOnceRunner

    kind = _kind(runner_cfg.get('type'), RUNNERS)
    return isinstance(kind, type) and issubclass(kind, ServeOnceRunner)


def engine_problems(model_cfgs: list, runner_cfg: dict) -> list[str]:
    """One line per model whose engine the Python its tasks, or ``ServeOnceRunner``'s replicas
    (``runner_cfg``: the inference stage's runner), will run cannot find. Replicas of a stand-in
    server (``server_argv``) load no engine."""
    from .serve_once import is_served

    settings = runner_cfg.get('placement_settings') or {}
    lines = []
    for model_cfg in model_cfgs:
        kind = _kind(model_cfg.get('type'), MODELS)
        modules = list(getattr(kind, 'engine_modules', ()))
        python, who = sys.executable, 'its tasks run'
        if _serves(runner_cfg) and is_served(model_cfg):
            if runner_cfg.get('server_argv'):
                continue
            python, who = settings.get('python') or python, "ServeOnceRunner's replicas run"
        for module in missing_modules(modules, python) if modules else []:
            lines.append(
                f'{model_cfg.get("abbr")}: {kind.__name__} needs {module}, which {python} '
                f'({who}) cannot import: {INSTALL.get(module, f"pip install {module}")}'
            )
    return lines


def slurm_problems(partitions: list[str], commands=('srun', 'sinfo')) -> list[str]:
    """Slurm's ``commands`` on the PATH, its controller answering ``sinfo``, and each of
    ``partitions`` among those it lists; one line each problem (none: ready)."""
    missing = [command for command in commands if shutil.which(command) is None]
    if missing:
        return [f'Slurm: {", ".join(missing)} not found on the PATH: {_SLURM_FIX}']
    try:
        done = subprocess.run(
            ['sinfo', '-h', '-o', '%P'], capture_output=True, text=True, timeout=SINFO_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return [
            f'Slurm: the controller did not answer `sinfo` within {SINFO_TIMEOUT_S:g} s: check '
            'it with `scontrol ping` (slurmctld running, reachable from here)'
        ]
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ['no message'])[-1]
        return [
            f'Slurm: `sinfo` failed ({said}): check the controller with `scontrol ping` '
            '(slurmctld running, reachable from here, the same slurm.conf)'
        ]
    known = [name.rstrip('*') for name in done.stdout.split()]
    return [
        f'Slurm: no partition {name!r} (sinfo lists {", ".join(known) or "none"}): set the '
        "runner's partition to one of them"
        for name in dict.fromkeys(partitions)
        if name not in known
    ]


def ray_problems(address: Optional[str], setting: str) -> list[str]:
    """``ray`` installed, an address (``address`` or ``$RAY_ADDRESS``), and a head listening
    there; ``setting`` says where a config gives the address."""
    if importlib.util.find_spec('ray') is None:
        return [f'Ray: ray is not installed in {sys.executable}: {INSTALL["ray"]}']
    address = address or os.environ.get('RAY_ADDRESS')
    if not address:
        return [
            'Ray: no cluster address: export RAY_ADDRESS=HEAD:6379 (the head `ray start --head` '
            f'started), or set {setting}'
        ]
    if address in ('auto', 'local'):
        return []  # Ray finds (or starts) the cluster of this machine itself
    host, _, port = address.removeprefix('ray://').rpartition(':')
    host, port = (host, port) if port.isdigit() else (address.removeprefix('ray://'), '')
    try:
        with socket.create_connection((host, int(port or RAY_PORT)), CONNECT_TIMEOUT_S):
            return []
    except OSError as exc:
        return [
            f'Ray: nothing answers at {host}:{port or RAY_PORT} ({exc.strerror or exc}) within '
            f'{CONNECT_TIMEOUT_S:g} s: start the head there (`ray start --head --port='
            f'{port or RAY_PORT}`) or fix RAY_ADDRESS / {setting}'
        ]


def runner_problems(runner_cfg: dict) -> list[str]:
    """What the runner of a stage (a config dict) needs of this machine, one line each."""
    from opencompass.runners import SlurmRunner

    from .ray_runner import RayRunner
    from .serve_once import ServeOnceRunner

    kind = _kind(runner_cfg.get('type'), RUNNERS)
    if not isinstance(kind, type):
        return []
    if issubclass(kind, SlurmRunner):
        partition = runner_cfg.get('partition') or os.environ.get('LVEVAL_SLURM_PARTITION')
        return slurm_problems([partition] if partition else [])
    if issubclass(kind, RayRunner):
        return ray_problems(runner_cfg.get('address'), 'address= in the runner config')
    if issubclass(kind, ServeOnceRunner):
        placement = runner_cfg.get('placement', 'local')
        settings = runner_cfg.get('placement_settings') or {}
        found = runner_problems(dict(runner_cfg.get('runner') or {}))
        if placement == 'slurm':
            found += slurm_problems([], commands=('srun', 'sinfo', 'scancel'))
        elif placement == 'ray':
            found += ray_problems(settings.get('address'), "placement_settings' address")
        return found
    return []


def stop_if_unready(runners: list[dict], model_cfgs: list) -> None:
    """Raise ``SystemExit`` (exit 1, one line per problem) where the runner of a stage
    (``runners``: the inference stage's first) or a model's engine is missing on this machine
    (``runner_problems``, ``engine_problems``)."""
    lines = engine_problems(model_cfgs, runners[0] if runners else {})
    for runner_cfg in runners:
        lines += [line for line in runner_problems(runner_cfg) if line not in lines]
    if lines:
        raise SystemExit(
            '\n'.join(
                [
                    'The run stopped before any task started: what it runs on is not ready here.',
                    *(f'- {line}' for line in lines),
                ]
            )
        )
