"""How far each harness's scores are from the official scorers', on one fixed set of predictions.

    python bench/bench_fidelity.py [--cache DIR] [--skip NAME ...]

The fixed set (``fidelity/fixed.py``: the golden cases of RULER, LV-Eval, LongBench v2 and MRCR,
whose official scores came from running the official code) is scored by this package's
functions and by the ports in OpenCompass 0.5.4, lm-evaluation-harness 0.4.13 and evalscope
1.14.1 (``fidelity/harnesses.py``: the last two in virtual environments made from PyPI and kept
in the cache folder). It prints a Markdown table of each scorer's distance from the official
score per task (points, signed, after rounding as the official prints), what each harness lacks,
the versions and timings, and last:

    fidelity: this package 0.00 points from the official scorers on N tasks; largest other gap X points (HARNESS, TASK)

A harness that cannot be installed is skipped, saying why in one line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from fidelity.fixed import fixed_set, payload
from fidelity.harnesses import DEFAULT_CACHE, HARNESSES, HarnessError, environment, lacks, scored
from fidelity.ours import package_scores
from fidelity.report import LACKS, RAISES, cell, gaps, last_line, table

OURS = 'this package'


def run_harnesses(tasks, payload_file: Path, cache: Path, skip: list[str]):
    """Each harness's outcome: its driver's output, or the one-line reason it was skipped; and
    the seconds spent installing and scoring."""
    outcomes, seconds = {}, {}
    for harness in HARNESSES:
        if any(word.lower() in harness.name.lower() for word in skip):
            outcomes[harness.name] = 'skipped (--skip)'
            continue
        start = time.perf_counter()
        try:
            python = environment(harness, cache)
            installed = time.perf_counter()
            outcomes[harness.name] = scored(harness, python, payload_file)
        except (HarnessError, subprocess.TimeoutExpired, OSError) as exc:
            outcomes[harness.name] = f'skipped: {exc}'
            installed = time.perf_counter()
        seconds[harness.name] = (installed - start, time.perf_counter() - installed)
    return outcomes, seconds


def columns_and_notes(tasks, ours_gaps, outcomes):
    """The table's columns (cells by task key), the notes to print, every other scorer's gaps."""
    columns = {OURS: {key: cell(gap, LACKS) for key, gap in ours_gaps.items()}}
    notes, others = [], []
    for harness in HARNESSES:
        outcome = outcomes[harness.name]
        if isinstance(outcome, str):
            columns[harness.name] = {task.key: outcome.split(':')[0] for task in tasks}
            notes.append(f'{harness.name}: {outcome}')
            continue
        found = gaps(tasks, outcome['scores'], harness.name)
        others.extend(found.values())
        cells = {}
        for task in tasks:
            raised = outcome['notes'].get(task.key)
            cells[task.key] = RAISES if raised else cell(found.get(task.key), LACKS)
            if raised:
                notes.append(f'{harness.name} on {task.key}: raises {raised}')
            elif task.key not in found and not lacks(harness, task.family, task.key):
                notes.append(
                    f'{harness.name} on {task.key}: not scored by its driver (a bench bug)'
                )
        columns[harness.name] = cells
        if harness.lacks:
            notes.append(
                f'{harness.name} does not score: '
                + '; '.join(f'{scope} ({why})' for scope, why in harness.lacks.items())
            )
        versions = ', '.join(f'{k} {v}' for k, v in outcome['versions'].items())
        notes.append(f'{harness.name}: ran with {versions}')
    return columns, notes, others


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--cache', type=Path, default=DEFAULT_CACHE, help='where the venvs live')
    parser.add_argument('--skip', nargs='*', default=[], help='harnesses to leave out (by name)')
    args = parser.parse_args()
    start = time.perf_counter()
    tasks = fixed_set()
    ours = package_scores(tasks)
    ours_seconds = time.perf_counter() - start
    ours_gaps = gaps(tasks, ours, OURS)
    with tempfile.TemporaryDirectory(prefix='fidelity-') as folder:
        payload_file = Path(folder) / 'payload.json'
        payload_file.write_text(json.dumps(payload(tasks)), encoding='utf-8')
        outcomes, seconds = run_harnesses(tasks, payload_file, args.cache, args.skip)
    columns, notes, others = columns_and_notes(tasks, ours_gaps, outcomes)
    print(
        'Points from the official score per task (scorer minus official, each rounded as the '
        'official prints); - : the harness lacks the task'
    )
    print('\n'.join(table(tasks, columns)))
    print('\n'.join(notes))
    print(
        f'timings: fixed set and this package {ours_seconds:.1f} s; '
        + '; '.join(
            f'{name} install {a:.1f} s, scoring {b:.1f} s' for name, (a, b) in seconds.items()
        )
        + f'; total {time.perf_counter() - start:.1f} s; venvs in {args.cache}'
    )
    print(last_line(len(tasks), list(ours_gaps.values()), others))


if __name__ == '__main__':
    main()
