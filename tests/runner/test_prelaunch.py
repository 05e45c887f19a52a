"""What a run checks in its driver before any task starts (runner/prelaunch.py), the GPU check
(runner/local.py) and how the causes are listed (runner/stops.py), on real dataset configs, data files, tokenizer folders and
OpenCompass's own task classes; tests/test_e2e.py runs them through `opencompass`."""

import io
import logging
import os
from pathlib import Path

import pytest
from mmengine.config import Config, ConfigDict
from opencompass.partitioners import NumWorkerPartitioner

from opencompass_lveval.files.errors import ModelConfigError
from opencompass_lveval.framework import benchmarks
from opencompass_lveval.leaderboard.runs import Run, missing_reason
from opencompass_lveval.lveval.synthetic import write_synthetic
from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner, gpu_shortfall, local_gpus
from opencompass_lveval.runner.prelaunch import CheckedPartitioner, data_problem, model_problems
from opencompass_lveval.runner.stops import Problem, grouped
from opencompass_lveval.testing import train_tokenizer

TASKS = ['cmrc_mixup', 'factrecall_en']
GOOD = dict(type='opencompass_lveval.models.baselines.ExtractiveBaseline', abbr='bm25')
MISSING = dict(type='opencompass_lveval.models.hf.LongContextHF', abbr='mine',
               path='./no/such/model', max_seq_len=4096)  # fmt: skip


def lveval_datasets(folder: Path) -> list:
    configs = benchmarks.named('lveval').configs(str(folder), ['16k'], TASKS)
    return [ConfigDict(config) for config in configs]


def partition(work: Path, models: list, datasets: list, partitioner=CheckedPartitioner):
    combos = [dict(models=[ConfigDict(m) for m in models], datasets=datasets)]
    out_dir = str(work / 'predictions')
    return partitioner(out_dir=out_dir, num_worker=1).partition(combos, str(work), out_dir)


def first_line(path: Path) -> str:
    return path.read_text('utf-8').splitlines()[0]


def test_a_missing_model_folder_stops_the_run_and_every_pair_says_why(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_synthetic(tmp_path / 'data', count=2, levels=['16k'])
    datasets, work = lveval_datasets(tmp_path / 'data'), tmp_path / 'run'
    with pytest.raises(SystemExit) as stop:
        partition(work, [MISSING, GOOD], datasets)
    message = str(stop.value)
    assert message.startswith('The run stopped before any task started')
    assert 'mine on LVEval_cmrc_mixup_16k, LVEval_factrecall_en_16k: ModelConfigError: ' in message
    assert 'tokenizer folder ./no/such/model does not exist' in message
    assert 'bm25' not in message  # the good model has no problem of its own
    logs = work / 'logs' / 'infer'
    assert first_line(logs / 'mine' / 'LVEval_factrecall_en_16k.out').startswith(
        'ModelConfigError: mine: tokenizer folder ./no/such/model does not exist'
    )
    assert first_line(logs / 'bm25' / 'LVEval_cmrc_mixup_16k.out').startswith(
        'NotRunError: the run stopped before any task started'
    )
    run = Run(work, [], datasets={'mine': [d['abbr'] for d in datasets]})
    assert missing_reason(run, 'mine', 'LVEval_cmrc_mixup_16k').startswith('ModelConfigError')
    assert not (tmp_path / '.cache').exists() and not (work / 'predictions').exists()


def test_good_inputs_are_partitioned_as_before_without_reading_a_dataset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_synthetic(tmp_path / 'data', count=2, levels=['16k'])
    datasets = lveval_datasets(tmp_path / 'data')
    checked = partition(tmp_path / 'run', [GOOD], datasets)
    assert not (tmp_path / '.cache').exists()  # OpenCompass's reads each dataset to size it
    plain = partition(tmp_path / 'run', [GOOD], datasets, NumWorkerPartitioner)
    assert (tmp_path / '.cache' / 'dataset_size.json').is_file()
    assert [t.to_dict() for t in checked] == [t.to_dict() for t in plain]
    assert [d['abbr'] for d in checked[0]['datasets'][0]] == [d['abbr'] for d in datasets]


def test_what_is_predicted_already_is_not_checked_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    datasets, work = lveval_datasets(tmp_path / 'gone'), tmp_path / 'run'
    for dataset in datasets:  # `-r`: the data has moved, but nothing is left to infer
        (work / 'predictions' / 'bm25').mkdir(parents=True, exist_ok=True)
        (work / 'predictions' / 'bm25' / f'{dataset["abbr"]}.json').write_text('{}')
    assert partition(work, [GOOD], datasets) == []
    (work / 'predictions' / 'bm25' / 'LVEval_cmrc_mixup_16k.json').unlink()
    with pytest.raises(SystemExit, match='bm25 on LVEval_cmrc_mixup_16k: LVEvalDataError: '):
        partition(work, [GOOD], datasets)


def test_data_problems_are_the_loaders_own_errors(tmp_path):
    write_synthetic(tmp_path / 'data', count=2, levels=['16k'])
    present, elsewhere = lveval_datasets(tmp_path / 'data'), lveval_datasets(tmp_path / 'gone')
    assert data_problem(present[0]) is None
    assert data_problem(elsewhere[0]).startswith('LVEvalDataError: LV-Eval data folder ')
    with open(tmp_path / 'data' / 'factrecall_en_16k.jsonl', 'ab') as broken:
        broken.write(b'{"input": "\xff"}\n')
    assert data_problem(present[1]).startswith('LVEvalDataError: ')
    assert 'factrecall_en_16k.jsonl, line 3: not UTF-8 text' in data_problem(present[1])
    (tmp_path / 'data' / 'cmrc_mixup_16k.jsonl').unlink()
    assert data_problem(present[0]).startswith(
        'LVEvalDataError: LV-Eval subset cmrc_mixup_16k (cmrc_mixup_16k.jsonl) not found under '
    )
    ada = benchmarks.named('adaleval').configs(str(tmp_path / 'gone'), ['1k'], ['bestanswer'])
    assert data_problem(ada[0]).startswith('AdaLEvalDataError: Ada-LEval data folder ')
    plain = dict(type='opencompass.datasets.GSM8KDataset', abbr='gsm8k', path='nowhere')
    assert data_problem(plain) is None  # other packages' datasets are left to their tasks


def test_a_window_too_small_for_one_answer_names_that_dataset_alone(tmp_path):
    train_tokenizer().save_pretrained(tmp_path / 'model')
    model = dict(MISSING, path=str(tmp_path / 'model'), max_seq_len=70)
    datasets = lveval_datasets(tmp_path / 'data')  # answers of 64 and 16 tokens
    problems = model_problems(model, datasets)
    assert list(problems) == ['LVEval_cmrc_mixup_16k']
    assert problems['LVEval_cmrc_mixup_16k'].startswith(
        'TruncationError: mine on LVEval_cmrc_mixup_16k: '
    )
    assert (
        'leaves no room for the prompt after 64 answer tokens' in problems['LVEval_cmrc_mixup_16k']
    )


def test_many_causes_are_listed_a_few_then_counted():
    problems = [Problem('m', f'd{i}', f'Error {i % 10}') for i in range(40)]
    lines = grouped(problems, shown=8)
    assert len(lines) == 9 and lines[-1] == '- and 2 more causes, each in the logs it concerns'
    assert lines[0] == '- m on d0, d10, d20 and 1 more: Error 0'


def test_the_gpus_here_are_counted_as_the_local_runner_counts_them(monkeypatch):
    import torch

    for value, count in (('0,1', 2), ('', 0), ('-1', 0), ('3', 1), ('0,0', 1)):
        monkeypatch.setenv('CUDA_VISIBLE_DEVICES', value)
        assert local_gpus() == (count, f'CUDA_VISIBLE_DEVICES={value!r}')
    monkeypatch.delenv('CUDA_VISIBLE_DEVICES')
    assert local_gpus()[0] == torch.cuda.device_count()


def test_a_task_asking_for_more_gpus_than_here_stops_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '')
    write_synthetic(tmp_path / 'data', count=2, levels=['16k'])
    big = dict(GOOD, abbr='big', run_cfg=dict(num_gpus=2))
    tasks = partition(tmp_path / 'run', [big, GOOD], lveval_datasets(tmp_path / 'data'))
    assert gpu_shortfall(tasks[1:], LongContextInferTask, 0, 'none') == []
    runner = CheckedLocalRunner(task=dict(type=LongContextInferTask))
    with pytest.raises(SystemExit) as stop:
        runner.launch(tasks)
    message = str(stop.value)
    assert "has, 0 (CUDA_VISIBLE_DEVICES='')" in message and '- big: 2 GPUs' in message
    assert (
        'configs/eval_demo.py (in `lveval configs-dir`) runs on CPU' in message
        and 'bm25' not in message
    )
    log = tmp_path / 'run' / 'logs' / 'infer' / 'big' / 'LVEval_factrecall_en_16k.out'
    assert first_line(log).startswith('GPURequestError: The run stopped before any task started')
    assert not (tmp_path / 'run' / 'predictions').exists()


def test_on_this_machine_the_gpus_are_compared_before_anything_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '')
    big = dict(GOOD, abbr='big', run_cfg=dict(num_gpus=2))
    runner = dict(
        type='opencompass_lveval.runner.local.CheckedLocalRunner',
        task=dict(type='opencompass_lveval.runner.infer_task.LongContextInferTask'),
    )
    work = tmp_path / 'run'
    cfg = Config(
        dict(models=[big], datasets=lveval_datasets(tmp_path / 'gone'), work_dir=str(work))
    )
    cfg['infer'] = dict(runner=runner)
    partitioner = CheckedPartitioner(out_dir=str(work / 'predictions'), num_worker=1)
    with pytest.raises(SystemExit, match=r'- big: 2 GPUs \(run_cfg.num_gpus\), 1 task\n'):
        partitioner(cfg)  # the data folder is missing too, but that is not the first thing to fix
    log = work / 'logs' / 'infer' / 'big' / 'LVEval_cmrc_mixup_16k.out'
    assert first_line(log).startswith('GPURequestError: ')
    cfg['infer']['runner']['type'] = 'opencompass_lveval.runner.slurm.CheckedSlurmRunner'
    for command in ('srun', 'sinfo'):  # a Slurm that answers (readiness.py checks it first)
        (tmp_path / command).write_text('#!/bin/sh\necho gpu\n')
        (tmp_path / command).chmod(0o755)
    monkeypatch.setenv('PATH', f'{tmp_path}:{os.environ["PATH"]}')
    with pytest.raises(
        SystemExit, match='big on LVEval_cmrc_mixup_16k, LVEval_factrecall_en_16k: '
    ):
        partitioner(cfg)  # elsewhere, its runner compares the GPUs; the data is read here
    assert first_line(log).startswith('LVEvalDataError: LV-Eval data folder ')


def test_a_check_failing_inside_the_task_still_names_every_dataset_in_its_log(tmp_path):
    """Under OpenCompass's own stages the task's check is the first to fail; its log (named
    after the first dataset) must still mention the others, or the board names no cause."""
    from opencompass.utils import get_logger

    datasets = lveval_datasets(tmp_path / 'data')
    cfg = Config(dict(models=[ConfigDict(MISSING)], datasets=[datasets], work_dir=str(tmp_path)))
    printed = io.StringIO()
    handler = logging.StreamHandler(printed)  # what the task prints into its log
    get_logger().addHandler(handler)
    try:
        with pytest.raises(ModelConfigError) as failed:
            LongContextInferTask(cfg).run()
    finally:
        get_logger().removeHandler(handler)
    log = tmp_path / 'logs' / 'infer' / 'mine' / 'LVEval_cmrc_mixup_16k.out'
    log.parent.mkdir(parents=True)
    log.write_text(printed.getvalue() + f'ModelConfigError: {failed.value}\n')
    run = Run(tmp_path, [], datasets={'mine': [d['abbr'] for d in datasets]})
    assert missing_reason(run, 'mine', 'LVEval_factrecall_en_16k').startswith(
        'ModelConfigError: mine: tokenizer folder ./no/such/model does not exist'
    )


def test_a_summarizer_name_that_matches_nothing_stops_the_run_naming_the_closest(tmp_path):
    """A misspelled row or group member of a registered benchmark's (an empty row otherwise);
    the average at a level the run has, and names of other packages, pass."""
    lveval = benchmarks.named('lveval')
    datasets = lveval.configs('data', ['16k'], TASKS) + lveval.at_sizes(
        lveval.configs('data', ['16k'], TASKS), ['512k']
    )
    summarizer = dict(
        dataset_abbrs=['LVEval_512k', 'gsm8k', ['LVEval_factrecal_en_16k', 'score']],
        summary_groups=[dict(name='mine', subsets=['LVEval_cmrc_mixup_16k', 'LVEval_cmrc_16k'])],
    )
    cfg = dict(datasets=datasets, summarizer=summarizer, infer={}, eval={})
    with pytest.raises(SystemExit) as stop:
        CheckedPartitioner(out_dir=str(tmp_path))(cfg)
    assert str(stop.value).splitlines() == [
        'The run stopped before any task started: its summarizer names what matches nothing '
        '(its row would be empty):',
        "- 'LVEval_factrecal_en_16k' names no dataset of the run, no LV-Eval dataset and no "
        "summary group; did you mean 'LVEval_factrecall_en_16k'?",
        "- 'LVEval_cmrc_16k' names no dataset of the run, no LV-Eval dataset and no summary "
        "group; did you mean 'LVEval_cmrc_mixup_16k'?",
    ]
