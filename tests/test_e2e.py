"""Whole OpenCompass runs, kept few and small (each task is a subprocess with seconds of imports):
the tiny random Llama through LongContextHF, and Slurm dispatch through a stand-in `srun`."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opencompass_lveval.lveval.synthetic import write_synthetic_data
from tiny_models import save_tiny_llama

REPO = Path(__file__).resolve().parents[1]
OPENCOMPASS = [sys.executable, '-m', 'opencompass.cli.main']
KEEP = ('LVEval_loogle_SD_mixup_16k', 'LVEval_factrecall_zh_16k')


def derived_config(tmp_path: Path, base: str, **overrides) -> Path:
    """The repo config ``base`` with a few keys replaced, dumped to a standalone file."""
    from mmengine.config import Config
    cfg = Config.fromfile(str(REPO / 'configs' / base), format_python_code=False)
    cfg.datasets = [d for d in cfg.datasets if d['abbr'] in KEEP]
    for key, value in overrides.items():
        cfg[key] = value
    path = tmp_path / 'config.py'
    cfg.dump(str(path))
    return path


def run_opencompass(config: Path, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(OPENCOMPASS + [str(config), '-w', str(cwd / 'out')], cwd=cwd,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def results(work_dir: Path, model: str) -> dict:
    run = next((work_dir / 'out').iterdir())
    return {path.stem: json.loads(path.read_text())
            for path in (run / 'results' / model).glob('*.json')}


@pytest.fixture
def data_dir(tmp_path):
    write_synthetic_data(tmp_path / 'data', count=3)
    return tmp_path / 'data'


def test_tiny_llama_through_opencompass(tmp_path, data_dir, monkeypatch):
    model_dir = save_tiny_llama(tmp_path / 'tiny_llama')
    model = dict(type='opencompass_lveval.models.hf.LongContextHF', abbr='tiny-llama',
                 path=str(model_dir), max_seq_len=256, max_out_len=8, batch_size=2,
                 model_kwargs=dict(device_map='cpu'), run_cfg=dict(num_gpus=0))
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(data_dir))  # read when the config is parsed
    config = derived_config(tmp_path, 'eval_demo.py', models=[model])
    done = run_opencompass(config, tmp_path, {})
    scores = results(tmp_path, 'tiny-llama')
    assert sorted(scores) == sorted(KEEP)
    for score in scores.values():
        assert 0 <= score['score'] <= 100 and len(score['details']) == 3
    assert 'LVEval_loogle_SD_mixup_16k' in done.stdout


def test_slurm_dispatch_with_a_stand_in_srun(tmp_path, data_dir, monkeypatch):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    log = tmp_path / 'srun.log'
    srun = bin_dir / 'srun'
    srun.write_text('#!/usr/bin/env bash\n'
                    '# Stand-in for Slurm: log the request, then run the task here.\n'
                    f'echo "$*" >> {log}\n'
                    'while [ $# -gt 0 ]; do case "$1" in -J) shift 2; break;; *) shift;; esac; done\n'
                    'exec bash -c "$*"\n')
    srun.chmod(0o755)
    models = [dict(type='opencompass_lveval.models.baselines.ExtractiveBaseline',
                   abbr='extractive-bm25', batch_size=8, max_out_len=64,
                   run_cfg=dict(num_gpus=1))]
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(data_dir))
    config = derived_config(tmp_path, 'eval_lveval_slurm.py', models=models)
    run_opencompass(config, tmp_path, {'PATH': f'{bin_dir}:{os.environ["PATH"]}'})
    requests = log.read_text().splitlines()
    infer = [r for r in requests if 'openicl_infer' in r]
    evaluate = [r for r in requests if 'openicl_eval' in r]
    assert infer and all(r.startswith('-p gpu --gres=gpu:1 -N1 -u -J') for r in infer)
    assert evaluate and all(r.startswith('-p cpu -N1 -u -J') for r in evaluate)
    assert sorted(results(tmp_path, 'extractive-bm25')) == sorted(KEEP)
