"""The conformance kit (``opencompass_lveval.testing.check_benchmark``) says which check a
benchmark fails and why, and skips, saying so, what a failed check leaves nothing to check. Its
passing run is the one of tests/test_passkey.py and of the examples' own tests."""

from __future__ import annotations

import json
import random

import pytest

from opencompass_lveval.framework import benchmarks
from opencompass_lveval.framework.declared import DeclaredBenchmark
from opencompass_lveval.testing import ConformanceError, check_benchmark
from opencompass_lveval.testing.conformance import Conformance

AFTER_CONFIGS = [
    'count-only: not checked, as the configs check failed',
    'opencompass run: not checked, as the configs check failed',
    *(
        f'{check}: not checked, as the opencompass run check failed'
        for check in ('scores', 'summary', 'report', 'leaderboard')
    ),
]


class Shaky(DeclaredBenchmark):
    """Records drawn from an unseeded generator, and a summary with no rows."""

    name, title, prefix = 'shaky', 'Shaky', 'Shaky'
    tasks, sizes, data_file = ('copy',), ('1k',), 'shaky_{size}.jsonl'

    def score_record(self, prediction, answer):
        return 100.0 * (answer in prediction)

    def synthetic_records(self, task, size, count, seed):
        return [{'context': 'c', 'input': 'i', 'answer': str(random.random())}] * count

    def summary(self, abbrs=None):
        return [], []


class Raising(Shaky):
    name = 'raising'

    def synthetic_records(self, task, size, count, seed):
        raise KeyError('depth')


@pytest.fixture
def shaky(monkeypatch):
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), Shaky()))
    return benchmarks.named('shaky')


def test_a_benchmark_that_is_not_registered_fails_registration_and_nothing_else_runs(tmp_path):
    with pytest.raises(ConformanceError) as caught:
        check_benchmark('mrcr', tmp_path)
    lines = str(caught.value).splitlines()
    known = ', '.join(b.name for b in benchmarks.registered())
    assert lines[:2] == [
        "benchmark 'mrcr' fails 9 check(s):",
        f"- registration: no benchmark 'mrcr'; known: {known} (is its distribution installed "
        'in this environment?)',
    ]
    after = ['determinism', 'configs']
    assert lines[2:4] == [f'- {c}: not checked, as the registration check failed' for c in after]
    assert lines[4:] == [f'- {line}' for line in AFTER_CONFIGS]
    assert list(tmp_path.iterdir()) == []  # nothing built


def test_unseeded_data_and_an_empty_summary_are_each_named_with_the_fix(shaky, tmp_path):
    failures = Conformance('shaky', tmp_path).all()
    assert failures == [
        'determinism: the same seed gave other bytes in shaky/shaky_1k.jsonl: seed every random '
        'choice',
        'configs: summary_config(datasets) gives no summary rows',
        *AFTER_CONFIGS,
    ]


def test_a_check_whose_benchmark_code_raises_names_the_error_and_the_rest_go_on(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), Raising()))
    failures = Conformance('raising', tmp_path).all()
    assert failures[:2] == [
        "determinism: KeyError: 'depth'",
        'configs: summary_config(datasets) gives no summary rows',
    ]


def test_a_declaration_registration_would_refuse_fails_registration_with_the_reason(
    shaky, monkeypatch, tmp_path
):
    """A benchmark put in the registry by hand (not through an entry point, which registration
    would refuse) is checked as registration checks an entry point's."""
    monkeypatch.setattr(shaky, 'name', 'shaky one')
    with pytest.raises(ConformanceError) as caught:
        check_benchmark('shaky one', tmp_path)
    lines = str(caught.value).splitlines()
    assert lines[1].startswith("- registration: Shaky.name holds 'shaky one': a ")  # the rule
    assert lines[2] == '- determinism: not checked, as the registration check failed'


@pytest.mark.parametrize(('random_score', 'failure'), [(0.0, None), (100.0, 'takes any reply')])
def test_a_random_baseline_that_scores_full_marks_fails_the_scores_check(
    shaky, tmp_path, random_score, failure
):
    conformance = Conformance('shaky', tmp_path, benchmark=shaky, run=tmp_path / 'run')
    for model, score in (('extractive-bm25', 50.0), ('random-guess', random_score)):
        (conformance.run / 'results' / model).mkdir(parents=True)
        path = conformance.run / 'results' / model / 'Shaky_copy_1k.json'
        path.write_text(json.dumps({'score': score}))
    conformance.check('scores', conformance.scores)
    expected = 'scores: the random baseline scores 100.00: the metric takes any reply'
    assert conformance.failures == ([expected] if failure else [])
