"""bench/bench_ruler_build.py's arithmetic: the search and the samples timed apart add up to the
file's time, and files taken longest first by several processes end when the busiest does."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'bench'))

from bench_ruler_build import over_processes, timed_phases  # noqa: E402


def test_files_taken_longest_first_end_with_the_busiest_process():
    seconds = {'niah': 5.0, 'vt': 3.0, 'cwe': 3.0, 'fwe': 1.0}
    assert over_processes(seconds, 1) == 12.0
    assert over_processes(seconds, 2) == 6.0  # niah + fwe, vt + cwe
    assert over_processes(seconds, 8) == 5.0


def test_the_search_and_the_samples_add_up_to_the_files_time(llama2_counter, monkeypatch):
    monkeypatch.setattr('os.cpu_count', lambda: 2)  # 4 samples counted ahead: 3 batches of 12
    args = SimpleNamespace(length=2048, count=12)
    wall, search, per_sample = timed_phases(args, 'vt', llama2_counter, None, None)
    assert per_sample > 0 and search > 0
    assert search + args.count * per_sample <= wall
    assert search + args.count * per_sample > 0.5 * wall
