"""What every harness driver shares. A driver runs in its harness's own Python environment,
copied alone with this file into a temporary folder (nothing of this repository is importable
there): ``python drive_X.py PAYLOAD OUT`` reads the fixed set (``fixed.payload``) from the JSON
file PAYLOAD and writes ``{"versions": {...}, "scores": {task key: [part scores, points]},
"notes": {task key: text}}`` to OUT. A task a harness lacks is left out of ``scores``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from importlib import metadata


def run(scorers: dict[str, Callable[[dict], list[float]]], distributions: list[str]) -> None:
    """Score each task whose family has a scorer; a scorer's exception becomes the task's note
    (its last line), so one failure does not hide the other tasks."""
    payload_path, out_path = sys.argv[1], sys.argv[2]
    with open(payload_path, encoding='utf-8') as stream:
        tasks = json.load(stream)
    scores, notes = {}, {}
    for task in tasks:
        scorer = scorers.get(task['family'])
        if scorer is None:
            continue
        key = f'{task["family"]} {task["name"]}'
        try:
            found = scorer(task)
        except Exception as exc:  # reported per task: the bench prints it beside the table
            notes[key] = f'{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ""}'
            continue
        if found is not None:
            scores[key] = found
    versions = {name: metadata.version(name) for name in distributions}
    with open(out_path + '.part', 'w', encoding='utf-8') as stream:
        json.dump({'versions': versions, 'scores': scores, 'notes': notes}, stream)
    os.replace(out_path + '.part', out_path)
