"""How BestAnswer building grows with its source: the real ``stackselect_1k.json`` repeated
1, 2, 4 and 8 times (question ids made unique), built at 4k (candidates from questions sharing
40% of the tags) and 32k (one shared tag is enough, so nearly every question is near), each size
in a fresh process: its seconds and peak memory (maximum resident set).

    python bench/bench_bestanswer.py [--times 1 2 4 8] [--settings 4k 32k]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import stackselect_questions  # noqa: E402


def one_build(source: str, setting: str, out: str) -> None:
    """Runs in the child: the build, then its seconds and peak memory as one JSON line."""
    from opencompass_lveval.adaleval.build import build_bestanswer

    started = time.perf_counter()
    build_bestanswer(source, setting, out, tokenizer='words')
    seconds = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({'seconds': seconds, 'peak_mib': peak_mib}))


def repeated_source(original: list[dict], times: int, folder: Path) -> Path:
    questions = [
        {**question, 'question_id': f'{question["question_id"]}-{copy}'}
        for copy in range(times)
        for question in original
    ]
    path = folder / f'stackselect_x{times}.json'
    path.write_text(json.dumps(questions, ensure_ascii=False), encoding='utf-8')
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--times', type=int, nargs='+', default=[1, 2, 4, 8])
    parser.add_argument('--settings', nargs='+', default=['4k', '32k'])
    args = parser.parse_args()
    original = stackselect_questions()
    with tempfile.TemporaryDirectory() as folder:
        for setting in args.settings:
            for times in args.times:
                path = repeated_source(original, times, Path(folder))
                child = subprocess.run(
                    [sys.executable, __file__, '--child', str(path), setting, folder],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                found = json.loads(child.stdout.strip().splitlines()[-1])
                print(
                    f'{setting:>4}, {len(original) * times:>5} questions: '
                    f'{found["seconds"]:6.1f} s, peak {found["peak_mib"]:.0f} MiB'
                )


if __name__ == '__main__':
    if sys.argv[1:2] == ['--child']:
        one_build(*sys.argv[2:5])
    else:
        main()
