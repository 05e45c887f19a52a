"""LongContextVLLM on the real vLLM engine (its CPU build), in one small ``opencompass`` run.

Three models on factrecall records: Qwen-7B-Chat's official inputs (its chatml pieces joined on
special-token ids, the official cut at ``max_length``), a Llama-2 chat template in the exact mode
with a YaRN scaling, and a window too small for any answer. What the engine received, generated
and was started with is read from vLLM's own objects (``tests/vllm_spy``); the references start
from the raw records, the official prompt strings and the tokenizers (``tests/official.py``).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from official import chat_template_ids, lveval_prompt
from parity_data import data_json
from runs import load_config, run_opencompass
from servers import VLLM_ENGINE_KWARGS, VLLM_ENV, VLLM_SIZE, require_vllm
from test_prompt_parity import (
    dataset_config,
    official_ids,
    official_settings,
    raw_records,
    removed_middle_only,
    row,
)

pytestmark = [pytest.mark.slow, pytest.mark.vllm]
SPY = Path(__file__).resolve().parents[1] / 'vllm_spy'
OFFICIAL_ROW = 'qwen-7b-chat-8k'  # official inputs, the chatml pieces of Qwen's make_context
YARN = {'rope_type': 'yarn', 'factor': 2.0, 'original_max_position_embeddings': 2048}
EXACT_WINDOW = 4096  # what YARN covers: 2048 x 2
CASES = (('en', '16k'), ('zh', '1k'))  # cut for both models; uncut for both


def engine_model(abbr: str, folder: Path, **settings) -> dict:
    return dict(
        type='opencompass_lveval.models.vllm.LongContextVLLM',
        abbr=abbr,
        path=str(folder),
        model_kwargs=dict(VLLM_ENGINE_KWARGS),
        max_out_len=64,
        batch_size=4,
        run_cfg=dict(num_gpus=0),
        **settings,
    )


@pytest.fixture(scope='module')
def engine_run(tmp_path_factory, hf_tokenizers, corpora):
    """The run: (its folder, its config, the spy's lines, the data folder)."""
    require_vllm()
    from opencompass_lveval.lveval.build import build_factrecall
    from opencompass_lveval.testing import save_tiny_llama

    root = tmp_path_factory.mktemp('vllm_run')
    data = root / 'data'
    for language, level in CASES:
        build_factrecall(language, data, corpora, levels=[level], count=2)
    qwen = save_tiny_llama(root / 'qwen', 8192, hf_tokenizers['qwen'], **VLLM_SIZE)
    llama = save_tiny_llama(root / 'llama2', 2048, hf_tokenizers['llama2'], **VLLM_SIZE)
    (root / 'llama2-small').symlink_to(llama)  # its own path, so the spy tells it apart
    official = official_settings(row(OFFICIAL_ROW))
    models = [
        engine_model('qwen-official', qwen, **official),
        engine_model('llama2-exact-yarn', llama, max_seq_len=EXACT_WINDOW, rope_scaling=YARN),
        engine_model('llama2-window-too-small', root / 'llama2-small', max_seq_len=16),
    ]
    config = root / 'config.py'
    cfg = load_config('eval_demo.py')
    cfg.datasets = [dataset_config(data, language, level) for language, level in CASES]
    cfg.models = models
    cfg.infer.runner.max_num_workers = 1  # one engine at a time on this machine's cores
    # OpenCompass's own partitioner: the window too small is then refused inside its task, before
    # its engine starts, while the other models run (the package's CheckedPartitioner would stop
    # the whole run in the driver: tests/runner/test_prelaunch.py).
    cfg.infer.partitioner = dict(type='NumWorkerPartitioner', num_worker=1)
    cfg.dump(str(config))
    spy = root / 'spy.jsonl'
    env = {**VLLM_ENV, 'VLLM_SPY_FILE': str(spy), 'HF_HUB_OFFLINE': '1'}
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(SPY), os.environ.get('PYTHONPATH')]))
    run_opencompass(config, root, env)
    lines = [json.loads(line) for line in spy.read_text().splitlines()]
    return sorted((root / 'out').iterdir())[-1], config, lines, data


def requests_of(lines: list[dict], folder: Path) -> list[dict]:
    return [line for line in lines if line['event'] == 'request' and line['model'] == str(folder)]


def model_folder(config: Path, abbr: str) -> Path:
    from mmengine.config import Config

    models = Config.fromfile(str(config), format_python_code=False)['models']
    return Path(next(m['path'] for m in models if m['abbr'] == abbr))


def test_the_engine_received_the_official_and_exact_inputs_of_the_raw_records(
    engine_run, hf_tokenizers
):
    folder, config, lines, data = engine_run
    official = data_json('reference/lveval_official.json')
    qwen_sent = Counter(
        tuple(r['prompt_token_ids'])
        for r in requests_of(lines, model_folder(config, 'qwen-official'))
    )
    llama_sent = [
        r['prompt_token_ids'] for r in requests_of(lines, model_folder(config, 'llama2-exact-yarn'))
    ]
    max_length = row(OFFICIAL_ROW).max_length
    expected_qwen: Counter = Counter()
    for language, level in CASES:
        for record in raw_records(data, f'factrecall_{language}_{level}'):
            prompt = lveval_prompt(official, record)
            ids = official_ids(OFFICIAL_ROW, hf_tokenizers, prompt, max_length)
            expected_qwen[tuple(ids)] += 1
            was_cut = len(hf_tokenizers['qwen'](prompt).input_ids) > max_length
            assert was_cut == (level == '16k')  # the cases are what their names say
            full = chat_template_ids(hf_tokenizers['llama2'], prompt)
            if level == '1k':
                assert full in llama_sent
            else:  # cut in the middle, to the window less the answer
                budget = EXACT_WINDOW - official['max_out_len']['factrecall_en']
                assert any(
                    len(ids) == budget and removed_middle_only(ids, full) for ids in llama_sent
                )
    assert qwen_sent == expected_qwen
    assert len(llama_sent) == sum(expected_qwen.values()) == 4


def inputs_lines(config: Path, out: Path) -> list[dict]:
    """What ``lveval inputs`` writes for the run's config."""
    from opencompass_lveval.cli import main

    models = 'qwen-official,llama2-exact-yarn'  # the third one's window holds no answer
    assert main(['inputs', str(config), '--out', str(out), '--models', models]) == 0
    return [json.loads(line) for line in out.read_text('utf-8').splitlines()]


def test_lveval_inputs_shows_each_record_as_the_engine_received_it(engine_run, tmp_path):
    folder, config, lines, _ = engine_run
    shown = inputs_lines(config, tmp_path / 'inputs.jsonl')
    for abbr in ('qwen-official', 'llama2-exact-yarn'):
        received = Counter(
            tuple(r['prompt_token_ids']) for r in requests_of(lines, model_folder(config, abbr))
        )
        listed = Counter(tuple(line['input_ids']) for line in shown if line['model'] == abbr)
        assert received == listed and sum(listed.values()) == 4


def test_answers_and_usage_records_are_the_engines(engine_run, tmp_path):
    """Each prediction is the engine's text for the ids of its record (matched through ``lveval
    inputs``), and its usage record counts the ids the engine received and generated."""
    folder, config, lines, _ = engine_run
    shown = inputs_lines(config, tmp_path / 'inputs.jsonl')
    for abbr in ('qwen-official', 'llama2-exact-yarn'):
        answers = {
            tuple(r['prompt_token_ids']): r for r in requests_of(lines, model_folder(config, abbr))
        }
        checked = 0
        for path in (folder / 'predictions' / abbr).glob('*.json'):
            if path.name.endswith('.inference.json'):
                continue
            predictions = json.loads(path.read_text())
            for line in (x for x in shown if x['model'] == abbr and x['dataset'] == path.stem):
                entry, engine = predictions[str(line['index'])], answers[tuple(line['input_ids'])]
                assert entry['prediction'] == engine['text']
                usage = entry['usage']
                assert usage['prompt_tokens'] == len(engine['prompt_token_ids'])
                assert usage['completion_tokens'] == len(engine['token_ids'])
                assert usage['prompt_tokens_match'] is True
                assert usage['transport'] == 'in-process'
                checked += 1
        assert checked == 4


def test_the_yarn_scaling_reached_the_engine_as_hf_overrides(engine_run):
    folder, config, lines, _ = engine_run
    llama = str(model_folder(config, 'llama2-exact-yarn'))
    started = [line for line in lines if line['event'] == 'engine' and line['model'] == llama]
    assert len(started) == 1
    engine = started[0]
    assert engine['max_model_len'] == EXACT_WINDOW == engine['max_position_embeddings']
    # The released config's rope_theta is kept beside the scaling (rope.py).
    assert engine['rope_parameters'] == {**YARN, 'rope_theta': 10000.0}
    assert len(list((folder / 'results' / 'llama2-exact-yarn').glob('*.json'))) == len(CASES)


def test_a_window_too_small_is_refused_before_the_weights_load(engine_run):
    folder, config, lines, _ = engine_run
    small = str(model_folder(config, 'llama2-window-too-small'))
    assert not [line for line in lines if line['model'] == small]  # no engine was started
    logs = ''.join(p.read_text() for p in (folder / 'logs' / 'infer').rglob('*.out'))
    assert 'llama2-window-too-small on LVEval_factrecall_en_16k' in logs
    assert 'raise max_seq_len' in logs
    assert not (folder / 'predictions' / 'llama2-window-too-small').exists()
