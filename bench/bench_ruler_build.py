"""How long RULER data takes to build, as a run's driver builds it: every task's file at one
length through ``build`` (the files over ``--workers`` processes, each file's samples counted
ahead in batches), the wall time and each file's; and, with ``--ahead-of TASK``, one file built
in this process counting one sample at a time (the official order) and then ahead in batches,
same bytes, both timed; with ``--phases``, each task's file built in this process with its
search (the binary-search probes, until the first samples are done) and its samples timed apart,
and the build of ``--project`` samples per task projected from them (for lengths where building
500 x 13 is longer than the time at hand).

    python bench/bench_ruler_build.py [--length 131072] [--count 500] [--workers N]
                                      [--tasks niah_single_1 vt ...] [--tokenizer DIR]
                                      [--inputs DIR] [--ahead-of TASK]
                                      [--phases --project 500]

Defaults: all 13 tasks, the golden set's llama2_sp tokenizer and stand-in inputs (the Paul Graham
essays and word list of tests/data, its punkt_tab copy beside them); the stand-in QA files hold
60 questions, so where ``--count`` asks more, squad.json and hotpotqa.json are the seeded
synthetic ones of ``lveval data synth`` with as many questions (shorter documents: the prompt
fills the same budget with more of them). Run it under ``flock /tmp/heavy.lock``: 500 x 13 at
131072 keeps every core busy for tens of minutes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from opencompass_lveval.ruler.build import build, counted_ahead, generate, manifest_text
from opencompass_lveval.ruler.inputs import HOTPOTQA, SQUAD, punkt_folder
from opencompass_lveval.ruler.synthetic import write_inputs
from opencompass_lveval.ruler.tasks import TASKS
from opencompass_lveval.ruler.tokens import token_counter

DATA = Path(__file__).resolve().parents[1] / 'tests' / 'data' / 'reference'
STAND_IN_QUESTIONS = 60  # in each stand-in QA file


def whole_build(args, inputs: Path, out: Path) -> None:
    lines: list[str] = []
    start = time.perf_counter()
    build(
        Path(args.tokenizer),
        args.tasks,
        [args.length],
        out,
        inputs,
        count=args.count,
        workers=args.workers,
        log=lines.append,
    )
    wall = time.perf_counter() - start
    seconds = {line.split('/')[-2]: float(line.split(' in ')[-1][:-2]) for line in lines}
    for task in args.tasks:
        print(f'{task:<16} {seconds[task]:>8.1f} s')
    workers = args.workers or os.cpu_count()
    print(
        f'{args.count} x {len(args.tasks)} tasks at {args.length}: {wall:.0f} s wall over '
        f'{min(workers, len(args.tasks))} processes ({os.cpu_count()} cores), tokenizer load '
        f'included; the files took {sum(seconds.values()):.0f} s in all, the longest '
        f'{max(seconds.values()):.0f} s ({max(seconds, key=seconds.get)})'
    )


def ahead_or_not(args, inputs: Path) -> None:
    counter = token_counter(Path(args.tokenizer))
    timed, texts = {}, {}
    for ahead in (1, counted_ahead(args.length)):
        start = time.perf_counter()
        job = generate(args.ahead_of, args.length, counter, inputs, count=args.count, ahead=ahead)
        timed[ahead], texts[ahead] = time.perf_counter() - start, manifest_text(job.records)
        print(
            f'{args.ahead_of} x {args.count} at {args.length}, {ahead} ahead: {timed[ahead]:.1f} s'
        )
    assert len(set(texts.values())) == 1, 'counting ahead changed the bytes'
    print(f'same bytes; {timed[1] / timed[max(timed)]:.2f} x as fast counting ahead')


def timed_phases(args, task: str, counter, inputs: Path, punkt: Path) -> tuple[float, float, float]:
    """One file built here: (wall, search, seconds per sample), the search being the time until
    the first samples are told done less those samples' share (an upper bound on the samples'
    time where they are told done at once)."""
    marks: list[tuple[float, int]] = []  # (time, samples done) as the job tells them

    def told(samples: int) -> None:
        marks.append((time.perf_counter(), samples + (marks[-1][1] if marks else 0)))

    start = time.perf_counter()
    generate(task, args.length, counter, inputs, count=args.count, punkt=punkt, progress=told)
    wall = time.perf_counter() - start
    (first, first_done), (last, last_done) = marks[0], marks[-1]
    if last_done == first_done:  # told once (fwe counts all its samples together): all per sample
        return wall, 0.0, wall / args.count
    per_sample = (last - first) / (last_done - first_done)
    return wall, max(0.0, first - start - first_done * per_sample), per_sample


def phases(args, inputs: Path) -> None:
    counter = token_counter(Path(args.tokenizer))
    punkt = punkt_folder(inputs)
    projected = {}
    for task in args.tasks:
        wall, search, per_sample = timed_phases(args, task, counter, inputs, punkt)
        projected[task] = search + args.project * per_sample
        print(
            f'{task:<16} {wall:>6.1f} s for {args.count}: search {search:5.1f} s + '
            f'{per_sample:5.2f} s/sample -> {projected[task]:6.0f} s for {args.project}',
            flush=True,
        )
    print(
        f'{args.project} x {len(args.tasks)} tasks at {args.length}, projected: '
        f'{sum(projected.values()):.0f} s of one process in all, the longest file '
        f'{max(projected.values()):.0f} s ({max(projected, key=projected.get)}); over '
        f'{os.cpu_count()} processes at least {over_processes(projected, os.cpu_count()):.0f} s'
    )


def over_processes(seconds: dict, workers: int) -> float:
    """The wall time of files taken longest first by ``workers`` processes (the build's order is
    by length, then task; this is its best case)."""
    ends = [0.0] * max(1, workers)
    for took in sorted(seconds.values(), reverse=True):
        ends[ends.index(min(ends))] += took
    return max(ends)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--length', type=int, default=131072)
    parser.add_argument('--count', type=int, default=500)
    parser.add_argument('--workers', type=int)
    parser.add_argument('--tokenizer', default=str(DATA / 'tokenizers' / 'llama2_sp'))
    parser.add_argument('--inputs')
    parser.add_argument('--tasks', nargs='+', default=[task.name for task in TASKS])
    parser.add_argument('--ahead-of', help='one task: counting one at a time against ahead')
    parser.add_argument('--phases', action='store_true', help='search and samples timed apart')
    parser.add_argument('--project', type=int, default=500, help='samples projected (--phases)')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        inputs = Path(args.inputs) if args.inputs else Path(scratch) / 'inputs'
        if not args.inputs:
            shutil.copytree(DATA / 'stand_in', inputs)
            shutil.copytree(DATA / 'nltk_data', inputs / 'nltk_data')
            if args.count > STAND_IN_QUESTIONS:
                synthetic = write_inputs(Path(scratch) / 'synthetic', 0, args.count)
                for name in (SQUAD, HOTPOTQA):
                    shutil.copy(synthetic / name, inputs / name)
        if args.ahead_of:
            ahead_or_not(args, inputs)
        elif args.phases:
            phases(args, inputs)
        else:
            whole_build(args, inputs, Path(scratch) / 'out')


if __name__ == '__main__':
    main()
