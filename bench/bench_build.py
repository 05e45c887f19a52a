"""Build time and peak memory of the builders, each in a fresh process (`lveval build ...`).

    python bench/bench_build.py [--corpora DIR] [--out /tmp/lveval_build_bench]
                                [--only replica|factrecall]

Peak memory is the child's maximum resident set; the baseline line shows what importing the
package (OpenCompass, torch) costs by itself, so the builder's own share is the difference.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from corpora import DEFAULT


def run(command: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one command in a fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f'{" ".join(command)} failed with status {status}')
    return time.perf_counter() - start, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--corpora', default=str(DEFAULT))
    parser.add_argument('--out', default='/tmp/lveval_build_bench')
    parser.add_argument('--only', choices=['replica', 'factrecall'])
    args = parser.parse_args()
    lveval = [sys.executable, '-m', 'opencompass_lveval.cli']
    seconds, peak = run([sys.executable, '-c', 'import opencompass_lveval'])
    print(f'baseline: import opencompass_lveval  {seconds:6.1f} s  peak {peak / 1e9:.2f} GB')
    jobs = {
        'factrecall': [
            lveval
            + [
                'build',
                'factrecall',
                '--language',
                language,
                '--corpora',
                args.corpora,
                '--out',
                f'{args.out}/factrecall_{language}',
            ]
            for language in ('en', 'zh')
        ],
        'replica': [
            lveval + ['build', 'replica', '--corpora', args.corpora, '--out', f'{args.out}/replica']
        ],
    }
    for name, commands in jobs.items():
        if args.only and name != args.only:
            continue
        for command in commands:
            out = Path(command[command.index('--out') + 1])
            shutil.rmtree(out, ignore_errors=True)
            seconds, peak = run(command)
            size = sum(p.stat().st_size for p in out.glob('*.jsonl'))
            largest = max(p.stat().st_size for p in out.glob('*.jsonl'))
            print(
                f'{out.name:>14}: {seconds:6.1f} s  peak {peak / 1e9:.2f} GB  '
                f'{len(list(out.glob("*.jsonl")))} files, {size / 1e9:.2f} GB, largest '
                f'{largest / 1e6:.0f} MB'
            )


if __name__ == '__main__':
    main()
