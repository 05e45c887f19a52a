"""Parity with the official LV-Eval evaluation on the golden results in tests/data: in the fast
loop on a slice (every tenth case, one prediction file per metric with its official row), in the
slow tests on all of them."""

import json
import shutil
import subprocess
import sys

import pytest
from parity_data import (
    DATA,
    GOLDEN_CASES,
    METRIC_FILES,
    OFFICIAL_RESULT,
    cases_slice,
    data_json,
    data_lines,
    result_rows,
)

from opencompass_lveval.lveval.metrics import METRICS
from opencompass_lveval.lveval.score import score_folder, write_official_results


@pytest.fixture(scope='module')
def golden(golden_lveval):
    return golden_lveval


def mismatches(cases: list[dict]) -> list[tuple]:
    """The cases whose score differs from the official per-sample score."""
    return [
        (case['dataset'], case['length_level'], case['pred'][:40], case['official_score'], got)
        for case in cases
        if (
            got := METRICS[case['official_metric']](
                case['pred'], case['answers'][0], case['gold_ans']
            ).score
        )
        != case['official_score']
    ]


def test_official_per_sample_scores_on_the_slice_in_the_checkout():
    cases = [json.loads(line) for line in cases_slice(data_lines(GOLDEN_CASES))]
    assert len(cases) == 211
    assert len({(case['dataset'], case['length_level']) for case in cases}) == 55
    assert len({case['official_metric'] for case in cases}) == 5
    assert mismatches(cases) == []


def test_official_subset_scores_of_one_file_per_metric_in_the_checkout(tmp_path):
    files = [DATA / name for name in METRIC_FILES]
    for path in files:
        shutil.copy(path, tmp_path / path.name)
    scored = score_folder(tmp_path)
    official = result_rows(data_json(OFFICIAL_RESULT))
    assert len(official) == len(files) == 5
    assert {subset.subset: subset.score for subset in scored.subsets} == official


@pytest.mark.slow
def test_every_official_per_sample_score(golden):
    cases = [json.loads(line) for line in (golden / 'cases.jsonl').read_text('utf-8').splitlines()]
    assert len(cases) == 2106
    assert mismatches(cases) == []


@pytest.fixture(scope='module')
def prediction_copy(golden, tmp_path_factory):
    folder = tmp_path_factory.mktemp('golden_predictions')
    for path in golden.glob('*_*k.jsonl'):
        shutil.copy(path, folder / path.name)
    assert len(list(folder.iterdir())) == 55
    return folder


def test_score_folder_reproduces_result_json_and_csv_exactly(golden, prediction_copy, tmp_path):
    write_official_results(score_folder(prediction_copy).subsets, tmp_path)
    official = golden / 'official_result'
    ours = json.loads((tmp_path / 'result.json').read_text())
    expected = json.loads((official / 'result.json').read_text())
    assert len(expected) == 55
    assert ours == expected
    assert list(ours) == list(expected)  # same order as the official script
    assert (tmp_path / 'result.json').read_bytes() == (official / 'result.json').read_bytes()
    assert (tmp_path / 'result.csv').read_bytes() == (official / 'result.csv').read_bytes()


@pytest.mark.slow
def test_lveval_score_command_writes_eval_result(golden, prediction_copy):
    done = subprocess.run(
        [sys.executable, '-m', 'opencompass_lveval.cli', 'score', str(prediction_copy)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert 'hotpotwikiqa_mixup' in done.stdout
    written = prediction_copy / 'eval_result'
    assert (written / 'result.json').read_bytes() == (
        golden / 'official_result' / 'result.json'
    ).read_bytes()
    assert (written / 'result.csv').read_bytes() == (
        golden / 'official_result' / 'result.csv'
    ).read_bytes()
