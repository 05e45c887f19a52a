"""bench/bench_fidelity.py's own part for this package: its functions score the fixed set (the
golden cases of RULER, LV-Eval, LongBench v2 and MRCR) exactly as the official scorers did, on
every task, and the bench's last line is made as documented. The harness environments are the
bench's business, not the tests'."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'bench'))

from fidelity.fixed import LVEVAL, fixed_set  # noqa: E402
from fidelity.ours import package_scores  # noqa: E402
from fidelity.report import Gap, gaps, last_line  # noqa: E402

LAST_LINE = re.compile(
    r'fidelity: this package (\d+\.\d\d) points from the official scorers on (\d+) tasks; '
    r'largest other gap (\d+\.\d\d) points \((.+), (.+)\)'
)


def _exact_on(family_test) -> list:
    tasks = [task for task in fixed_set() if family_test(task.family)]
    found = gaps(tasks, package_scores(tasks), 'this package')
    assert set(found) == {task.key for task in tasks}
    assert {key: gap.points for key, gap in found.items() if gap.points != 0} == {}
    return tasks


def test_package_is_exact_on_ruler_longbench_v2_and_mrcr():
    tasks = _exact_on(lambda family: family != LVEVAL)
    counts = {f: sum(t.family == f for t in tasks) for f in ('RULER', 'LongBench v2', 'MRCR')}
    # 13 tasks and the synthetic one; 4 settings and the extraction cases; both graders
    assert counts == {'RULER': 14, 'LongBench v2': 5, 'MRCR': 2}
    official = {task.key: task.official for task in tasks}
    # the official numbers as the golden files print them (summary.csv, result.txt, cases)
    assert official['RULER niah_single_1'] == 66.67
    assert official['LongBench v2 cot'] == 31.0
    assert official['MRCR mrcr_v2'] == 62.93


@pytest.mark.slow
def test_package_is_exact_on_lveval():
    tasks = _exact_on(lambda family: family == LVEVAL)
    assert len(tasks) == 11 and all(len(task.parts) == 5 for task in tasks)


def test_a_wrong_score_shows_as_a_gap():
    task = next(task for task in fixed_set() if task.key == 'RULER qa_1')
    found = gaps([task], {task.key: [task.official - 3.333]}, 'a harness')
    assert found[task.key].points == -3.33


def test_last_line_format():
    others = [
        Gap('evalscope 1.14.1', 'MRCR mrcr_openai', 14.11),
        Gap('lm-evaluation-harness 0.4.13', 'RULER qa_1', -55.56),
    ]
    line = last_line(32, [Gap('this package', 'RULER vt', 0.0)], others)
    assert line == (
        'fidelity: this package 0.00 points from the official scorers on 32 tasks; '
        'largest other gap 55.56 points (lm-evaluation-harness 0.4.13, RULER qa_1)'
    )
    assert LAST_LINE.fullmatch(line).groups() == (
        '0.00',
        '32',
        '55.56',
        'lm-evaluation-harness 0.4.13',
        'RULER qa_1',
    )
    drifted = last_line(3, [Gap('this package', 'MRCR mrcr_v2', -0.01)], others)
    assert LAST_LINE.fullmatch(drifted).group(1) == '0.01'
