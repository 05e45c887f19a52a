"""Evaluation without predictions (runner/outcomes.py): the dataset is left out before any
evaluation task starts and named with its inference's error, in the terminal and in its
evaluation log, where `lveval leaderboard` finds it; on run folders laid out as OpenCompass
lays them out, and OpenCompass's own evaluation task class."""

from pathlib import Path

from mmengine.config import Config, ConfigDict
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.framework import benchmarks
from opencompass_lveval.leaderboard.runs import Run, missing_reason
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.outcomes import inferred_only

MODEL = dict(type='opencompass_lveval.models.baselines.ExtractiveBaseline', abbr='bm25')
DATA_ERROR = 'LVEvalDataError: data/factrecall_en_16k.jsonl, line 2: not UTF-8 text'


def eval_tasks(work: Path, groups: list[list[str]]) -> list:
    """Evaluation tasks as NaivePartitioner makes them: one model, these datasets each."""
    configs = benchmarks.named('lveval').configs('data', ['16k'])
    by_task = {config['abbr'].split('_', 1)[1].rsplit('_', 1)[0]: config for config in configs}
    return [
        Config(
            {
                'models': [ConfigDict(MODEL)],
                'datasets': [[ConfigDict(by_task[name]) for name in group]],
                'work_dir': str(work),
            }
        )
        for group in groups
    ]


def failed_inference(work: Path) -> None:
    """What an inference task of two datasets leaves when the second one's data fails: the
    first one's predictions and a log named after it that mentions both."""
    (work / 'predictions' / 'bm25').mkdir(parents=True)
    (work / 'predictions' / 'bm25' / 'LVEval_cmrc_mixup_16k.json').write_text('{}')
    log = work / 'logs' / 'infer' / 'bm25' / 'LVEval_cmrc_mixup_16k.out'
    log.parent.mkdir(parents=True)
    log.write_text(
        'INFO - Task [bm25/LVEval_cmrc_mixup_16k,bm25/LVEval_factrecall_en_16k]\n'
        'Traceback (most recent call last):\n'
        '  File "dataset.py", line 36, in read_table\n'
        f'opencompass_lveval.files.errors.{DATA_ERROR}\n'
    )


def test_a_dataset_whose_inference_failed_is_left_out_and_named(tmp_path):
    failed_inference(tmp_path)
    tasks = eval_tasks(tmp_path, [['cmrc_mixup', 'factrecall_en'], ['factrecall_en']])
    kept, left_out = inferred_only(tasks, OpenICLEvalTask.log_subdir)
    assert len(kept) == 1 and [d['abbr'] for d in kept[0]['datasets'][0]] == [
        'LVEval_cmrc_mixup_16k'
    ]
    assert [d['abbr'] for d in tasks[0]['datasets'][0]][1] == 'LVEval_factrecall_en_16k'  # kept
    assert {(p.model, p.dataset) for p in left_out} == {('bm25', 'LVEval_factrecall_en_16k')}
    cause = left_out[0].cause
    assert cause.startswith(
        'no predictions, its inference failed: opencompass_lveval.files.errors.'
    )
    assert cause.endswith(f'{DATA_ERROR} (logs/infer/bm25/LVEval_cmrc_mixup_16k.out)')
    log = tmp_path / 'logs' / 'eval' / 'bm25' / 'LVEval_factrecall_en_16k.out'
    assert log.read_text().startswith('NoPredictionsError: not evaluated, its inference failed: ')
    run = Run(
        tmp_path, [], datasets={'bm25': ['LVEval_cmrc_mixup_16k', 'LVEval_factrecall_en_16k']}
    )
    assert DATA_ERROR in missing_reason(run, 'bm25', 'LVEval_factrecall_en_16k')


def test_without_any_inference_log_the_cause_says_to_run_it(tmp_path):
    _, left_out = inferred_only(eval_tasks(tmp_path, [['cmrc_mixup']]), 'logs/eval')
    assert left_out[0].cause == (
        'no predictions, its inference left no error in logs/infer: run it first '
        '(`-m infer` or `-m all`)'
    )
    run = Run(tmp_path, [], datasets={'bm25': ['LVEval_cmrc_mixup_16k']})
    assert missing_reason(run, 'bm25', 'LVEval_cmrc_mixup_16k').startswith(
        'NoPredictionsError: not evaluated, its inference left no error'
    )


def test_the_runner_starts_no_evaluation_task_without_predictions(tmp_path):
    failed_inference(tmp_path)
    (tmp_path / 'predictions' / 'bm25' / 'LVEval_cmrc_mixup_16k.json').unlink()
    runner = CheckedLocalRunner(task=dict(type=OpenICLEvalTask), max_num_workers=2)
    tasks = eval_tasks(tmp_path, [['cmrc_mixup'], ['factrecall_en']])
    assert runner.launch(tasks) == []  # a task started would be a (name, exit code) here
    assert not (tmp_path / 'results').exists()
    assert sorted(p.name for p in (tmp_path / 'logs' / 'eval' / 'bm25').iterdir()) == [
        'LVEval_cmrc_mixup_16k.out',
        'LVEval_factrecall_en_16k.out',
    ]
