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
from opencompass_lveval.testing.conformance import BASELINES, Conformance

AFTER_CONFIGS = [
    'count-only: not checked, as the configs check failed',
    'opencompass run: not checked, as the configs check failed',
    *(
        f'{check}: not checked, as the opencompass run check failed'
        for check in ('scores', 'depths', 'random baseline', 'summary', 'report', 'leaderboard')
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
        "benchmark 'mrcr' fails 11 check(s):",
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


def _fake_run(conformance, records: dict[str, list[dict]], prompts=None) -> None:
    """A run folder holding each baseline's result (``records``: model -> details, each value
    wrapped in a list as OpenCompass writes them; the score their mean) and, for the random
    baseline, predictions with ``prompts`` as their origin prompts."""
    conformance.run = conformance.folder / 'run'
    for model, details in records.items():
        (conformance.run / 'results' / model).mkdir(parents=True)
        result = {'score': sum(d['score'] for d in details) / len(details)}
        result['details'] = [{key: [value] for key, value in d.items()} for d in details]
        path = conformance.run / 'results' / model / 'Shaky_copy_1k.json'
        path.write_text(json.dumps(result))
    folder = conformance.run / 'predictions' / 'random-guess'
    folder.mkdir(parents=True)
    found = {str(i): {'origin_prompt': p, 'prediction': ''} for i, p in enumerate(prompts or [])}
    (folder / 'Shaky_copy_1k.json').write_text(json.dumps(found))


def _checked(benchmark, tmp_path, records, prompts=None, checks=('scores',)) -> Conformance:
    conformance = Conformance(benchmark.name, tmp_path, benchmark=benchmark)
    _fake_run(conformance, records, prompts)
    for check in checks:
        step = getattr(conformance, check.replace(' ', '_'))
        conformance.check(check, step)
    return conformance


def test_scores_given_as_fractions_fail_naming_the_metric(shaky, tmp_path):
    fractions = [{'score': 1.0}, {'score': 0.0}, {'score': 0.5}]
    records = {'extractive-bm25': fractions, 'random-guess': [{'score': 0.0}] * 3}
    conformance = _checked(shaky, tmp_path, records)
    assert conformance.failures == [
        'scores: every score of both baselines, per dataset and per record, lies in [0, 1] (the '
        'largest is 1): scores given as fractions; give percentages (x 100), or declare '
        'score_scale = 100 for fractions in details'
    ]
    percent = {'extractive-bm25': [{'score': 100.0}, {'score': 0.5}], 'random-guess': fractions}
    assert _checked(shaky, tmp_path / 'percent', percent).failures == []


def test_a_baseline_scoring_zero_everywhere_is_a_warning_not_a_failure(shaky, tmp_path):
    records = {'extractive-bm25': [{'score': 100.0}], 'random-guess': [{'score': 0.0}]}
    conformance = _checked(shaky, tmp_path, records)
    assert conformance.failures == []
    assert conformance.warnings == [
        'random-guess scores 0 on every dataset (score): check that the metric takes a right '
        'answer, unless no such baseline can give one'
    ]


@pytest.fixture
def placed(monkeypatch):
    """Shaky with answer depths in its details, at three declared positions."""
    found = type('Placed', (Shaky,), {'depth_field': 'depth', 'depth_bins': (0, 0.5, 1)})()
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), found))
    return found


def test_a_depth_outside_the_context_fails_naming_the_file_and_record(placed, tmp_path):
    details = [{'score': 100.0, 'depth': d} for d in (0.0, 0.5, 1.5)]
    conformance = _checked(placed, tmp_path, dict.fromkeys(BASELINES, details), checks=['depths'])
    path = conformance.run / 'results' / 'extractive-bm25' / 'Shaky_copy_1k.json'
    assert conformance.failures == [
        f"depths: {path}: record 2's depth is 1.5, not a fraction of the context in [0, 1]"
    ]


def test_a_depth_bin_without_records_fails_and_a_full_map_passes(placed, tmp_path):
    details = [{'score': 100.0, 'depth': d} for d in (0.0, 0.1, 0.4)]
    conformance = _checked(placed, tmp_path, dict.fromkeys(BASELINES, details), checks=['depths'])
    assert conformance.failures == [
        'depths: the depth map of copy (extractive-bm25) has rows with no record: 100%; place '
        'demo answers in every row of depth_bins, or declare the rows the data fills'
    ]
    details = [{'score': 100.0, 'depth': d} for d in (0.0, 0.6, 0.9)]
    full = _checked(placed, tmp_path / 'full', dict.fromkeys(BASELINES, details), checks=['depths'])
    assert full.failures == []


def test_a_random_baseline_that_never_answers_its_own_prompts_fails(shaky, tmp_path, monkeypatch):
    prompts = ['c\n\nWhat is it?', [{'role': 'HUMAN', 'prompt': 'c\n\nWhat is it? Answer:'}]]
    records = dict.fromkeys(BASELINES, [{'score': 100.0}, {'score': 0.0}])
    undeclared = _checked(shaky, tmp_path, records, prompts, checks=['random baseline'])
    assert undeclared.failures == []
    assert undeclared.warnings == [
        'declares no random_answer: the random baseline answers its prompts with a random '
        'context sentence, no valid random answer'
    ]
    # it recognises a prompt ending "Answer:" only: the plain-string prompt is not answered
    monkeypatch.setattr(
        Shaky, 'random_answer', lambda self, p, rng: 'x' if p.endswith('Answer:') else None
    )
    conformance = _checked(shaky, tmp_path / 'declared', records, prompts, ['random baseline'])
    assert conformance.failures == [
        'random baseline: random_answer gives no answer to 1 of its 2 prompts (first: '
        "Shaky_copy_1k record 0, ending 'c\\n\\nWhat is it?'): the random baseline answers "
        'those with a context sentence; recognise the prompt as the run renders it'
    ]
    monkeypatch.setattr(Shaky, 'random_answer', lambda self, p, rng: None)
    never = _checked(shaky, tmp_path / 'never', records, prompts, ['random baseline'])
    assert never.failures[0].startswith('random baseline: random_answer gives no answer to 2 of')


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
