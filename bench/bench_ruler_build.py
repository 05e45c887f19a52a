"""How long RULER data takes to build, per task, at one length: the haystack search and the time
per sample, measured, and 500 samples x 13 tasks projected, serial and over processes.

    python bench/bench_ruler_build.py [--length 131072] [--count 3] [--tokenizer DIR]
                                      [--inputs DIR] [--tasks niah_single_1 vt ...]

Each task is generated once to warm up (word lists, files, punkt), then twice timed (1 sample,
then ``--count``), so the search (the
official probes, the one-shot example of vt) and a sample's cost separate: per sample =
(t(count) - t(1)) / (count - 1). Defaults: the golden set's llama2_sp tokenizer and stand-in
inputs (the punkt_tab copy of tests/data beside them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from opencompass_lveval.ruler.build import generate
from opencompass_lveval.ruler.tasks import TASKS
from opencompass_lveval.ruler.tokens import token_counter

DATA = Path(__file__).resolve().parents[1] / 'tests' / 'data' / 'reference'


def timed(task: str, length: int, count: int, counter, inputs: Path) -> tuple[float, int]:
    start = time.perf_counter()
    job = generate(task, length, counter, inputs, count=count)
    return time.perf_counter() - start, len(job.probes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--length', type=int, default=131072)
    parser.add_argument('--count', type=int, default=3)
    parser.add_argument('--tokenizer', default=str(DATA / 'tokenizers' / 'llama2_sp'))
    parser.add_argument('--inputs')
    parser.add_argument('--tasks', nargs='+', default=[task.name for task in TASKS])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        inputs = Path(args.inputs) if args.inputs else Path(scratch) / 'inputs'
        if not args.inputs:
            shutil.copytree(DATA / 'stand_in', inputs)
            shutil.copytree(DATA / 'nltk_data', inputs / 'nltk_data')
        start = time.perf_counter()
        counter = token_counter(Path(args.tokenizer))
        print(f'tokenizer {counter.name} loaded in {time.perf_counter() - start:.1f} s')
        print(f'{"task":<16} {"probes":>6} {"search s":>9} {"s/sample":>9} {"500 samples s":>14}')
        total = longest = 0.0
        for task in args.tasks:
            timed(task, args.length, 1, counter, inputs)  # warm: word lists, files, punkt
            one, probes = timed(task, args.length, 1, counter, inputs)
            many, _ = timed(task, args.length, args.count, counter, inputs)
            per_sample = max(many - one, 0.0) / (args.count - 1)
            search = max(one - per_sample, 0.0)
            projected = search + 500 * per_sample
            total, longest = total + projected, max(longest, projected)
            print(f'{task:<16} {probes:>6} {search:>9.1f} {per_sample:>9.2f} {projected:>14.0f}')
    cores = os.cpu_count() or 1
    print(
        f'500 x {len(args.tasks)} tasks at {args.length}: {total:.0f} s serial (one core); '
        f'over {cores} processes about {max(longest, total / cores):.0f} s (the longest task '
        f'alone: {longest:.0f} s)'
    )


if __name__ == '__main__':
    main()
