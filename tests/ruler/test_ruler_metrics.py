"""evaluate.py's post-processing and metrics on literal strings, then on the 390 golden cases
and the 13 task scores of the official summary.csv."""

from __future__ import annotations

import json

import pytest
from conftest import GOLDEN

from opencompass_lveval.ruler.metrics import (
    SAMPLE_METRICS,
    match_all,
    match_part,
    postprocess_pred,
    string_match_all,
    string_match_part,
)


@pytest.mark.parametrize(
    ('raw', 'expected'),
    [
        ('  answer \n', 'answer'),
        ('\x00\x01abc\x0b\x0c', 'abc'),  # control characters at the ends: gone
        ('55\x1b28', '55\n28'),  # inside: a newline, so the answer no longer matches
        ('a\tb', 'a\nb'),
        ('abc\x7f', 'abc\x7f'),  # DEL is kept
        ('\u00a0abc\u00a0', 'abc'),  # str.strip takes no-break spaces at the ends...
        ('a\u00a0b', 'a\u00a0b'),  # ...and keeps them inside
        (' \t\n ', ''),
    ],
)
def test_postprocess_pred(raw, expected):
    assert postprocess_pred(raw) == expected


def test_answers_count_anywhere_case_ignored():
    assert match_all('THE KEY IS 1234567.', ['1234567']) == 1.0
    assert match_all('x1234567x', ['1234567']) == 1.0  # inside a longer token
    assert match_all('12345671234568', ['1234567', '1234568']) == 1.0  # glued
    assert match_all('1234567', ['1234567', '7654321']) == 0.5
    assert match_all('', ['1234567']) == 0.0


def test_part_takes_any_alias_where_all_takes_the_fraction():
    """One SQuAD answer with three aliases, two of them in the prediction: RULER's qa metric gives
    100; a fraction (lm-evaluation-harness's string_match_part) would give 66.67."""
    aliases = ['Denver Broncos', 'the Broncos', 'Broncos of Denver']
    prediction = 'the Broncos: Denver Broncos'
    assert match_part(prediction, aliases) == 1.0
    assert string_match_part([prediction], [aliases]) == 100.0
    assert string_match_all([prediction], [aliases]) == 66.67


def test_task_scores_round_only_the_mean():
    assert string_match_all(['a', 'a b', ''], [['a'], ['a', 'c'], ['a']]) == 50.0
    assert string_match_all(['a', 'a', 'b'], [['a'], ['a'], ['a']]) == 66.67
    assert string_match_part(['x'] * 2 + [''], [['x']] * 3) == 66.67


def _cases() -> list[dict]:
    path = GOLDEN / 'scorer' / 'cases.jsonl'
    return [json.loads(line) for line in path.read_text(encoding='utf-8').splitlines()]


def test_the_390_golden_cases_score_as_officially():
    cases = [c for c in _cases() if c['case'] != '__aggregate__']
    assert len(cases) == 390
    for case in cases:
        processed = postprocess_pred(case['pred'])
        assert processed == case['official_postprocessed'], case
        one = SAMPLE_METRICS[case['metric']](processed, case['outputs'])
        assert round(one * 100, 2) == case['official_score'], case


def test_the_task_scores_are_the_official_summary():
    from opencompass_lveval.ruler.metrics import METRICS

    cases = _cases()
    aggregates = {c['task']: c['official_score'] for c in cases if c['case'] == '__aggregate__'}
    summary = (GOLDEN / 'scorer' / 'pred' / 'summary.csv').read_text().splitlines()
    assert summary[2] == 'Score,' + ','.join(str(v) for v in aggregates.values())
    for task, official in aggregates.items():
        mine = [c for c in cases if c['task'] == task and c['case'] != '__aggregate__']
        metric = METRICS[mine[0]['metric']]
        predictions = [postprocess_pred(c['pred']) for c in mine]
        assert metric(predictions, [c['outputs'] for c in mine]) == official
