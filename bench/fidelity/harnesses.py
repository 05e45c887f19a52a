"""The other harnesses: what each has of the four families, the environment it runs in, and how
its driver is run.

OpenCompass runs in the environment the bench runs in (it is installed with this package).
lm-evaluation-harness and evalscope each get a virtual environment of their own from PyPI,
made with ``uv`` (itself installed from PyPI into the cache folder) and kept in the cache folder
(default ``~/.cache/opencompass_lveval/fidelity``) for later runs: a folder is reused when its
``installed.json`` names the same requirements, else made again. A driver (``drivers/``) is
copied with ``drivers/common.py`` into a temporary folder and run there with the environment's
Python, the fixed set passed as a JSON file; nothing of this repository is importable there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

DRIVERS = Path(__file__).resolve().parent / 'drivers'
DEFAULT_CACHE = Path.home() / '.cache' / 'opencompass_lveval' / 'fidelity'
INSTALL_TIMEOUT_S = 900
DRIVER_TIMEOUT_S = 900
MARKER = 'installed.json'


@dataclass(frozen=True)
class Harness:
    name: str  # as the table's column and the last line name it
    driver: str  # file in drivers/
    requirements: tuple[str, ...] = ()  # empty: the bench's own environment
    lacks: dict = field(default_factory=dict)  # family or task key -> why it is not scored


HARNESSES = (
    Harness(
        'OpenCompass 0.5.4',
        'drive_opencompass.py',
        lacks={'MRCR mrcr_openai': 'MRCR v2 only, in opencompass/datasets/mrcr.py'},
    ),
    Harness(
        'lm-evaluation-harness 0.4.13',
        'drive_lm_eval.py',
        # lm_eval/tasks/ruler/common_utils.py imports transformers; torch is not needed to score
        ('lm-eval==0.4.13', 'transformers'),
        {
            'LV-Eval': 'no LV-Eval task',
            'LongBench v2': 'its longbench2_* tasks are multiple_choice: the log-likelihood of '
            '" A" to " D", no reply to score',
            'MRCR': 'no MRCR task',
        },
    ),
    Harness(
        'evalscope 1.14.1',
        'drive_evalscope.py',
        ('evalscope[openai-mrcr]==1.14.1',),
        {
            'RULER': 'no RULER benchmark',
            'LV-Eval': 'no LV-Eval benchmark',
            'MRCR mrcr_v2': 'OpenAI MRCR only, in benchmarks/openai_mrcr',
        },
    ),
)


def lacks(harness: Harness, family: str, key: str) -> str | None:
    """Why ``harness`` does not score the task, or None."""
    return harness.lacks.get(key) or harness.lacks.get(family)


class HarnessError(RuntimeError):
    """A harness could not be installed or its driver failed (the reason in one line)."""


def _run(command: list, timeout: int, **kwargs) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    if done.returncode:
        lines = (done.stderr or done.stdout).strip().splitlines() or ['(no output)']
        raise HarnessError(f'{" ".join(map(str, command[:3]))} ...: {lines[-1]}')


def _uv(cache: Path) -> Path:
    """``uv`` from PyPI, in its own environment under the cache folder."""
    uv = cache / 'uv' / 'bin' / 'uv'
    if not uv.exists():
        _run([sys.executable, '-m', 'venv', str(cache / 'uv')], INSTALL_TIMEOUT_S)
        _run([str(cache / 'uv' / 'bin' / 'pip'), 'install', '-q', 'uv'], INSTALL_TIMEOUT_S)
    return uv


def environment(harness: Harness, cache: Path) -> Path:
    """The Python that runs ``harness``'s driver: made (or reused) under ``cache``."""
    if not harness.requirements:
        return Path(sys.executable)
    folder = cache / harness.driver.removeprefix('drive_').removesuffix('.py')
    marker = folder / MARKER
    if marker.exists() and json.loads(marker.read_text())['requirements'] == list(
        harness.requirements
    ):
        return folder / 'bin' / 'python'
    shutil.rmtree(folder, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    uv = _uv(cache)
    base = getattr(sys, '_base_executable', sys.executable)
    _run([str(uv), 'venv', '-q', '--python', base, str(folder)], INSTALL_TIMEOUT_S)
    _run(
        [str(uv), 'pip', 'install', '-q', '--python', str(folder / 'bin' / 'python')]
        + list(harness.requirements),
        INSTALL_TIMEOUT_S,
    )
    partial = marker.with_suffix('.part')
    partial.write_text(json.dumps({'requirements': list(harness.requirements)}))
    partial.replace(marker)
    return folder / 'bin' / 'python'


def driver_env() -> dict:
    """The drivers' environment: offline, no PYTHONPATH (the harness sees only its own
    packages), caches in a temporary folder."""
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    env.update(HF_HUB_OFFLINE='1', HF_DATASETS_OFFLINE='1', TRANSFORMERS_OFFLINE='1')
    env.update(TOKENIZERS_PARALLELISM='false', PYTHONDONTWRITEBYTECODE='1')
    return env


def scored(harness: Harness, python: Path, payload_file: Path) -> dict:
    """Run the harness's driver on the payload; its output (versions, scores, notes)."""
    with tempfile.TemporaryDirectory(prefix='fidelity-') as folder:
        for name in ('common.py', harness.driver):
            shutil.copy(DRIVERS / name, Path(folder) / name)
        out = Path(folder) / 'out.json'
        env = {**driver_env(), 'HF_DATASETS_CACHE': str(Path(folder) / 'hf')}
        done = subprocess.run(
            [str(python), harness.driver, str(payload_file), str(out)],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=DRIVER_TIMEOUT_S,
        )
        if done.returncode or not out.exists():
            lines = done.stderr.strip().splitlines() or ['(no output)']
            raise HarnessError(f'its driver failed: {lines[-1]}')
        return json.loads(out.read_text())
