"""`lveval judge PRED_DIR --config ...`: official-format prediction folders (the `lveval score`
inputs) rated by the LLM judge, results written beside the keyword results; a second run is paid
from the cache.

The judge is a class whose ``chat`` answers from a fixed rule (see tests/evaluators/test_judge.py
for why that is acceptable at this layer); the config naming it is a real file read by the CLI.
"""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from parity_data import REPO

from opencompass_lveval.cli import main

GOLDEN = REPO / 'tests' / 'data' / 'golden' / 'lveval'

HELPER = '''
from dataclasses import dataclass

CALLS = []


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool


class LengthJudge:
    """[n] from the response's length (0 to 10), and "no idea" for empty responses."""

    def __init__(self, **config):
        self.config = config

    def chat(self, messages, max_out_len, temperature=0.0):
        prompt = messages[-1]['content']
        CALLS.append(prompt)
        response = prompt.rsplit('<The start of {response}>\\n', 1)[1].rsplit('\\n<The end', 1)[0]
        text = f'Rating: [{min(10, len(response) // 3)}]' if response.strip() else 'no idea'
        return Reply(text, 1000, 4, 0.0, False)
'''


@pytest.fixture
def judge_config(tmp_path, monkeypatch):
    helpers = tmp_path / 'helpers'
    helpers.mkdir()
    (helpers / 'length_judge.py').write_text(HELPER)
    monkeypatch.syspath_prepend(str(helpers))
    config = tmp_path / 'judge_config.py'
    config.write_text(
        'from length_judge import LengthJudge\n\n'
        "judge = dict(type=LengthJudge, abbr='length', path='length', "
        'prices=dict(prompt=30.0, completion=60.0))\n'
    )
    return config


def test_prediction_files_are_judged_beside_the_keyword_results(tmp_path, judge_config, capsys):
    import length_judge  # noqa: F401  (importable once the fixture put it on the path)

    preds = tmp_path / 'preds'
    preds.mkdir()
    for name in ('cmrc_mixup_16k.jsonl', 'factrecall_en_16k.jsonl'):
        shutil.copy(GOLDEN / name, preds / name)
    assert main(['score', str(preds)]) == 0
    assert main(['judge', str(preds), '--config', str(judge_config)]) == 0
    out = capsys.readouterr().out
    results = json.loads((preds / 'eval_result' / 'judge_result.json').read_text())
    keyword = json.loads((preds / 'eval_result' / 'result.json').read_text())
    assert set(results) == set(keyword)
    for subset, found in results.items():
        assert found['score'] == keyword[subset]  # the keyword score beside the judge's
        info = found['judge']
        assert info['rated'] + info['unparseable'] == info['samples']
        assert info['cost_usd'] == pytest.approx((1000 * 30 + 4 * 60) * info['samples'] / 1e6)
    calls = length_judge.CALLS
    assert any(c.startswith('You are a LLM evaluator. There are a refernce') for c in calls)
    cmrc_first = json.loads((preds / 'cmrc_mixup_16k.jsonl').read_text().splitlines()[0])
    assert any(
        f'<The start of {{question}}>\n{cmrc_first["input"]}\n<The end of {{question}}>' in c
        for c in calls
    )
    with open(preds / 'eval_result' / 'judge_result.csv', newline='') as stream:
        table = list(csv.reader(stream))
    assert table[0] == ['dataset_name', '16k']
    assert {row[0] for row in table[1:]} == {'cmrc_mixup', 'factrecall_en'}
    assert 'Spearman keyword vs judge over' in out
    assert 'judge length:' in out and 'wrote' in out

    # Again: every rating from the cache, nothing asked, nothing paid this run.
    asked = len(calls)
    assert main(['judge', str(preds), '--config', str(judge_config)]) == 0
    assert len(length_judge.CALLS) == asked
    assert '(this run $0.00)' in capsys.readouterr().out
    assert (preds / 'eval_result' / 'judge_cache' / 'length' / 'verdicts').is_dir()


def test_a_config_without_a_judge_and_a_missing_question_are_one_line_errors(
    tmp_path, judge_config, capsys
):
    preds = tmp_path / 'preds'
    preds.mkdir()
    records = [
        json.loads(line) for line in (GOLDEN / 'cmrc_mixup_16k.jsonl').read_text().splitlines()
    ]
    del records[1]['input']
    (preds / 'cmrc_mixup_16k.jsonl').write_text(
        '\n'.join(json.dumps(r, ensure_ascii=False) for r in records) + '\n'
    )
    empty = tmp_path / 'empty.py'
    empty.write_text('x = 1\n')
    assert main(['judge', str(preds), '--config', str(empty)]) == 2
    assert 'defines no `judge`' in capsys.readouterr().err
    assert main(['judge', str(preds), '--config', str(judge_config)]) == 2
    err = capsys.readouterr().err
    assert 'cmrc_mixup_16k.jsonl, line 2: "input" (the question) must be a string' in err
