"""The judge config scores a finished run again without inference: its eval task and partitioner
take every result that is not judged yet (OpenCompass's skip any that exists), keep the keyword
keys unchanged, add the judge's, and leave judged results alone.

The judge is a class whose ``chat`` answers from a fixed table (see tests/evaluators/test_judge.py
for why that is acceptable at this layer); OpenCompass's eval task runs in process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mmengine.config import Config
from parity_data import REPO

from opencompass_lveval.lveval.synthetic import write_synthetic
from opencompass_lveval.runner.judge_task import JudgeEvalTask, JudgePartitioner, judged

ABBR = 'LVEval_cmrc_mixup_16k'


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool


class SevenJudge:
    """Rates every response [7]; counts its calls across instances."""

    calls = 0

    def __init__(self, **config):
        self.config = config

    def chat(self, messages, max_out_len, temperature=0.0):
        type(self).calls += 1
        return Reply('[7]', 50, 2, 0.0, False)


def finished_run(tmp_path):
    data = tmp_path / 'data'
    write_synthetic(data, count=3, scale=1000, levels=['16k'])
    config = Config.fromfile(str(REPO / 'configs' / 'eval_lveval_judge.py'))
    dataset = next(d for d in config.datasets if d['abbr'] == ABBR)
    dataset['path'] = str(data)
    dataset['eval_cfg']['evaluator']['judge'] = dict(type=SevenJudge, abbr='seven', path='seven')
    run = tmp_path / 'work' / '20260101_000000'
    predictions = run / 'predictions' / 'model'
    predictions.mkdir(parents=True)
    (predictions / f'{ABBR}.json').write_text(
        json.dumps({str(i): {'origin_prompt': 'p', 'prediction': f'answer {i}'} for i in range(3)})
    )
    model = dict(abbr='model')
    return run, model, dataset


def test_a_finished_run_is_judged_and_judged_results_are_left_alone(tmp_path):
    run, model, dataset = finished_run(tmp_path)
    result_path = run / 'results' / 'model' / f'{ABBR}.json'
    result_path.parent.mkdir(parents=True)
    result_path.write_text(json.dumps({'score': 12.5, 'diagnostics': ['keyword only']}))
    combination = [{'models': [model], 'datasets': [dataset]}]
    partitioner = JudgePartitioner(out_dir=str(run / 'results'))
    assert len(partitioner.partition(combination, str(run), str(run / 'results'))) == 1

    task = Config({'models': [model], 'datasets': [[dataset]], 'work_dir': str(run)})
    SevenJudge.calls = 0
    JudgeEvalTask(task).run()
    result = json.loads(result_path.read_text())
    assert judged(result_path)
    assert SevenJudge.calls == 3
    assert result['judge_score'] == 70.0
    (info,) = result['judge']  # OpenCompass keeps a non-number per replica, in a list
    assert (info['model'], info['samples'], info['rated'], info['cached']) == ('seven', 3, 3, 0)
    assert info['prompt_tokens'] == 150 and info['cost_usd'] is None  # no prices given
    assert isinstance(result['score'], float)  # the keyword score, computed as before
    assert (run / 'judge_cache' / 'seven' / 'verdicts').is_dir()

    # Judged: the partitioner leaves it out and the task does not score it again.
    assert partitioner.partition(combination, str(run), str(run / 'results')) == []
    JudgeEvalTask(task).run()
    assert SevenJudge.calls == 3
    # A removed result is scored again from the judge's cache: nothing asked.
    result_path.unlink()
    JudgeEvalTask(task).run()
    assert SevenJudge.calls == 3
    assert json.loads(result_path.read_text())['judge_score'] == 70.0


def test_a_result_of_another_judge_under_the_same_name_is_judged_again(tmp_path):
    run, model, dataset = finished_run(tmp_path)
    combination = [{'models': [model], 'datasets': [dataset]}]
    task = Config({'models': [model], 'datasets': [[dataset]], 'work_dir': str(run)})
    task['eval'] = {'runner': {'task': {'dump_details': True}}}  # as `opencompass` sets it
    result_path = run / 'results' / 'model' / f'{ABBR}.json'
    SevenJudge.calls = 0
    JudgeEvalTask(task).run()
    result = json.loads(result_path.read_text())
    first = result['judge'][0]['settings_digest']
    assert judged(result_path, first) and SevenJudge.calls == 3
    # OpenCompass names each detail's record (what `lveval compare` pairs records by).
    assert [d['example_abbr'] for d in result['details']] == [f'{ABBR}_{i}' for i in range(3)]

    # The same name, another model: not this judge's result, so judged again (and asked).
    dataset['eval_cfg']['evaluator']['judge'] = dict(type=SevenJudge, abbr='seven', path='other')
    partitioner = JudgePartitioner(out_dir=str(run / 'results'))
    assert len(partitioner.partition(combination, str(run), str(run / 'results'))) == 1
    JudgeEvalTask(task).run()
    assert SevenJudge.calls == 6
    (info,) = json.loads(result_path.read_text())['judge']
    assert info['model'] == 'seven' and info['settings_digest'] != first
    assert partitioner.partition(combination, str(run), str(run / 'results')) == []

    # A result judged before results named their judge's settings is judged again too.
    result = json.loads(result_path.read_text())
    del result['judge'][0]['settings_digest']
    result_path.write_text(json.dumps(result))
    assert len(partitioner.partition(combination, str(run), str(run / 'results'))) == 1
