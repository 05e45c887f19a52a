"""Helpers for the tests that run OpenCompass end to end (each task a subprocess)."""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path

from opencompass_lveval.testing.conformance import OPENCOMPASS as OPENCOMPASS
from opencompass_lveval.testing.conformance import opencompass_run

REPO = Path(__file__).resolve().parents[1]
KEEP = ('LVEval_loogle_SD_mixup_16k', 'LVEval_factrecall_zh_16k')


def load_config(name: str):
    from mmengine.config import Config

    return Config.fromfile(str(REPO / 'configs' / name), format_python_code=False)


def derived_config(folder: Path, base: str, keep=KEEP, name: str = 'config.py', **overrides):
    """The repo config ``base`` with only the datasets in ``keep`` and a few keys replaced,
    dumped to a standalone file."""
    cfg = load_config(base)
    cfg.datasets = [d for d in cfg.datasets if d['abbr'] in keep]
    for key, value in overrides.items():
        cfg[key] = value
    path = folder / name
    cfg.dump(str(path))
    return path


def run_opencompass(config: Path, cwd: Path, env: dict = None, *extra: str, work='out', check=True):
    """`opencompass CONFIG -w CWD/WORK EXTRA...` run in ``cwd`` (the conformance kit's
    ``opencompass_run``); with ``check``, it must exit 0."""
    done = opencompass_run(config, cwd, *extra, env=env, work=work)
    assert done.returncode == 0 or not check, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def results(work_dir: Path, model: str, work='out') -> dict:
    run = sorted((work_dir / work).iterdir())[-1]
    return {
        path.stem: json.loads(path.read_text()) for path in (run / 'results' / model).glob('*.json')
    }


@contextlib.contextmanager
def logged():
    """The messages OpenCompass's logger gives meanwhile (its handlers write to the stream
    that was stdout when it was made)."""
    from opencompass.utils import get_logger

    messages = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = get_logger()
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
