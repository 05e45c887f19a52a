"""Start-up and scoring cost of the ``lveval`` command, beside LV-Eval's official ``evaluation.py``.

Each command runs in a fresh process (best wall time of ``--repeat`` runs, peak resident memory
from ``wait4``):
  lveval --help                      the command's start-up;
  lveval score COPY                  the 55 golden prediction files of tests/data/golden/lveval;
  python evaluation.py --input-dir   the official script on an identical copy, from a checkout of
                                     github.com/infinigence/LVEval given as ``--official`` (its
                                     files are copied to a temporary folder and the one line
                                     ``import torch`` of utils.py is removed; nothing else).
Both result folders are then compared byte for byte.

    python bench/bench_cli.py --official PATH/TO/LVEval [--golden tests/data/golden/lveval]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parent / 'tests' / 'data' / 'golden' / 'lveval'  # ../shared's, byte for byte
LVEVAL = Path(sys.executable).with_name('lveval')
OFFICIAL_FILES = ('evaluation.py', 'config.py', 'metrics.py', 'utils.py')


def run(command: list, cwd: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one command in a fresh process; fails loudly."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if status:
        raise SystemExit(f'{command} failed: {process.stderr.read().decode()[-2000:]}')
    return elapsed, usage.ru_maxrss * 1024


def best(command: list, cwd: Path, repeat: int) -> tuple[float, int]:
    runs = [run(command, cwd) for _ in range(repeat)]
    return min(t for t, _ in runs), max(m for _, m in runs)


def prediction_copy(golden: Path, folder: Path) -> Path:
    folder.mkdir(parents=True)
    for path in golden.glob('*_*k.jsonl'):
        shutil.copy(path, folder / path.name)
    return folder


def official_copy(checkout: Path, folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in OFFICIAL_FILES:
        shutil.copy(checkout / name, folder / name)
    utils = folder / 'utils.py'
    lines = utils.read_text(encoding='utf-8').splitlines(keepends=True)
    utils.write_text(
        ''.join(line for line in lines if line.strip() != 'import torch'), encoding='utf-8'
    )
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument(
        '--official', type=Path, required=True, help='a checkout of github.com/infinigence/LVEval'
    )
    parser.add_argument('--golden', type=Path, default=GOLDEN)
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        ours = prediction_copy(args.golden, scratch / 'ours')
        theirs = prediction_copy(args.golden, scratch / 'official_input')
        script = official_copy(args.official, scratch / 'official') / 'evaluation.py'
        rows = [
            ('lveval --help', best([LVEVAL, '--help'], scratch, args.repeat)),
            ('lveval score (55 files)', best([LVEVAL, 'score', ours], scratch, args.repeat)),
            (
                'official evaluation.py (55 files)',
                best([sys.executable, script, '--input-dir', theirs], script.parent, args.repeat),
            ),
        ]
        same = all(
            (ours / 'eval_result' / name).read_bytes()
            == (theirs / 'eval_result' / name).read_bytes()
            for name in ('result.json', 'result.csv')
        )
        official_time, official_memory = rows[-1][1]
        print(f'{"command":<36}{"best of " + str(args.repeat):>12}{"peak memory":>14}')
        for name, (seconds, memory) in rows:
            print(f'{name:<36}{seconds:>10.2f} s{memory / 2**20:>11.0f} MB')
        score_time, score_memory = rows[1][1]
        print(
            f'lveval score / official: {score_time / official_time:.2f}x the time, '
            f'{score_memory / official_memory:.2f}x the memory; result.json and result.csv '
            f'{"byte-identical" if same else "DIFFERENT"}'
        )


if __name__ == '__main__':
    main()
