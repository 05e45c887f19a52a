"""Whole OpenCompass runs, kept few and small (each task is a subprocess with seconds of imports):
the tiny random Llama through LongContextHF, and Slurm dispatch through a stand-in `srun`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opencompass_lveval.lveval.synthetic import write_synthetic_data
from opencompass_lveval.testing import save_tiny_llama

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
OPENCOMPASS = [sys.executable, '-m', 'opencompass.cli.main']
KEEP = ('LVEval_loogle_SD_mixup_16k', 'LVEval_factrecall_zh_16k')


def load_config(name: str):
    from mmengine.config import Config

    return Config.fromfile(str(REPO / 'configs' / name), format_python_code=False)


def derived_config(tmp_path: Path, base: str, keep=KEEP, **overrides) -> Path:
    """The repo config ``base`` with only the datasets in ``keep`` and a few keys replaced,
    dumped to a standalone file."""
    cfg = load_config(base)
    cfg.datasets = [d for d in cfg.datasets if d['abbr'] in keep]
    for key, value in overrides.items():
        cfg[key] = value
    path = tmp_path / 'config.py'
    cfg.dump(str(path))
    return path


def run_opencompass(config: Path, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(
        OPENCOMPASS + [str(config), '-w', str(cwd / 'out')],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def results(work_dir: Path, model: str) -> dict:
    run = next((work_dir / 'out').iterdir())
    return {
        path.stem: json.loads(path.read_text()) for path in (run / 'results' / model).glob('*.json')
    }


@pytest.fixture
def data_dir(tmp_path):
    """Synthetic data where configs/eval_demo.py looks for it, relative to the run's folder."""
    write_synthetic_data(tmp_path / 'data' / 'demo', count=3)
    return tmp_path / 'data' / 'demo'


def test_tiny_llama_through_opencompass(tmp_path, data_dir, monkeypatch):
    model_dir = save_tiny_llama(tmp_path / 'tiny_llama')
    model = dict(
        type='opencompass_lveval.models.hf.LongContextHF',
        abbr='tiny-llama',
        path=str(model_dir),
        max_seq_len=512,
        max_out_len=8,
        batch_size=2,
        model_kwargs=dict(device_map='cpu'),
        run_cfg=dict(num_gpus=0),
    )
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(data_dir))  # read when the config is parsed
    config = derived_config(tmp_path, 'eval_demo.py', models=[model])
    done = run_opencompass(config, tmp_path, {})
    scores = results(tmp_path, 'tiny-llama')
    assert sorted(scores) == sorted(KEEP)
    for score in scores.values():
        assert 0 <= score['score'] <= 100 and len(score['details']) == 3
    assert 'LVEval_loogle_SD_mixup_16k' in done.stdout
    # The summarizer of eval_demo.py also wrote the per-length report, from the same results.
    run = next((tmp_path / 'out').iterdir())
    table = (run / 'summary' / 'lveval_tiny-llama.csv').read_text().splitlines()
    loogle = next(line for line in table if line.startswith('loogle_SD_mixup,')).split(',')
    assert float(loogle[1]) == scores['LVEval_loogle_SD_mixup_16k']['score']
    assert (run / 'summary' / 'factrecall_heatmap_tiny-llama.png').exists()


def test_slurm_dispatch_with_a_stand_in_srun(tmp_path, data_dir, monkeypatch):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    log = tmp_path / 'srun.log'
    srun = bin_dir / 'srun'
    srun.write_text(
        '#!/usr/bin/env bash\n'
        '# Stand-in for Slurm: log the request, then run the task here.\n'
        f'echo "$*" >> {log}\n'
        'while [ $# -gt 0 ]; do case "$1" in -J) shift 2; break;; *) shift;; esac; done\n'
        'exec bash -c "$*"\n'
    )
    srun.chmod(0o755)
    models = [
        dict(
            type='opencompass_lveval.models.baselines.ExtractiveBaseline',
            abbr='extractive-bm25',
            batch_size=8,
            max_out_len=64,
            run_cfg=dict(num_gpus=1),
        )
    ]
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(data_dir))
    config = derived_config(tmp_path, 'eval_lveval_slurm.py', models=models)
    run_opencompass(config, tmp_path, {'PATH': f'{bin_dir}:{os.environ["PATH"]}'})
    requests = log.read_text().splitlines()
    infer = [r for r in requests if 'OpenICLInfer[' in r]
    evaluate = [r for r in requests if 'OpenICLEval[' in r]
    assert infer and all(r.startswith('-p gpu --gres=gpu:1 -N1 -u -J') for r in infer)
    assert evaluate and all(r.startswith('-p cpu -N1 -u -J') for r in evaluate)
    assert sorted(results(tmp_path, 'extractive-bm25')) == sorted(KEEP)


def test_random_guess_on_real_stackselect_1k_matches_the_paper(tmp_path, shared, monkeypatch):
    monkeypatch.setenv('ADALEVAL_DATA_DIR', str(shared / 'data' / 'adaleval'))
    cfg = load_config('datasets/adaleval/adaleval_gen.py')
    models = [
        dict(
            type='opencompass_lveval.models.baselines.RandomGuessBaseline',
            abbr='random-guess',
            seed=0,
            batch_size=250,
            max_out_len=32,
            run_cfg=dict(num_gpus=0),
        )
    ]
    config = derived_config(
        tmp_path,
        'eval_demo.py',
        keep=['AdaLEval_bestanswer_1k'],
        datasets=[d for d in cfg.adaleval_datasets if d['abbr'] == 'AdaLEval_bestanswer_1k'],
        models=models,
        summarizer=load_config('summarizers/adaleval.py').summarizer,
    )
    run_opencompass(config, tmp_path, {})
    result = results(tmp_path, 'random-guess')['AdaLEval_bestanswer_1k']
    assert len(result['details']) == 1000
    assert abs(result['accuracy'] - 26.7) <= 2  # the paper's random-guess figure for 1k
    assert result['random_guess'] == 26.16  # mean of 1/num_choice over the file
    assert result['instruction_following'] == 100.0


def test_perplexity_mode_and_position_bias_on_a_tiny_model(tmp_path, shared, monkeypatch):
    import random

    from opencompass_lveval.adaleval.prompts import tsort_prompt

    data = tmp_path / 'ada'
    data.mkdir()
    (data / 'stackselect_1k.json').write_text(
        (shared / 'data' / 'adaleval' / 'stackselect_1k.json').read_text('utf-8'), 'utf-8'
    )
    rng = random.Random(0)
    records = []
    for book in range(3):
        order = [1, 2, 3, 4]
        rng.shuffle(order)
        parts = [f'Paragraph {p} of book {book}: the river flows north.' for p in order]
        records.append(
            dict(
                book_id=book,
                para_offset=[0, 1, 2, 3],
                answer=[order.index(p) + 1 for p in (1, 2, 3, 4)],
                prompt=tsort_prompt('Before.', parts, 'After.'),
            )
        )
    (data / 'textsort_2k.json').write_text(json.dumps(records), 'utf-8')
    monkeypatch.setenv('ADALEVAL_DATA_DIR', str(data))
    position = load_config(
        'datasets/adaleval/adaleval_position_bias.py'
    ).adaleval_position_bias_datasets
    ppl = load_config('datasets/adaleval/adaleval_tsort_ppl.py').adaleval_tsort_ppl_datasets
    chosen = [d for d in position if d['abbr'].endswith('_1k')] + [
        d for d in ppl if d['abbr'] == 'AdaLEval_tsort_ppl_2k'
    ]
    for dataset in chosen:
        dataset['limit'] = 3
    # A window that holds the real BestAnswer 1k prompts whole (about 3,400 ids with the tiny
    # test vocabulary): their question is protected from the middle cut.
    model_dir = save_tiny_llama(tmp_path / 'tiny_llama', window=4096)
    model = dict(
        type='opencompass_lveval.models.hf.LongContextHF',
        abbr='tiny-llama',
        path=str(model_dir),
        max_seq_len=4096,
        max_out_len=8,
        batch_size=4,
        model_kwargs=dict(device_map='cpu'),
        run_cfg=dict(num_gpus=0),
    )
    abbrs = [d['abbr'] for d in chosen]
    config = derived_config(
        tmp_path, 'eval_demo.py', keep=abbrs, datasets=chosen, models=[model], summarizer=dict()
    )
    run_opencompass(config, tmp_path, {})
    scores = results(tmp_path, 'tiny-llama')
    assert sorted(scores) == sorted(abbrs)
    assert len(abbrs) == 4
    ppl_result = scores['AdaLEval_tsort_ppl_2k']
    assert len(ppl_result['details']) == 3
    # Perplexity mode always answers with one of the 24 orders.
    assert ppl_result['instruction_following'] == 100.0
    rear = scores['AdaLEval_bestanswer_rear_1k']['details']
    assert [d['answer'] for d in rear] == [['A3'], ['A3'], ['A2']]  # 3, 3, 2 answers: moved last
