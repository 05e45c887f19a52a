"""Conversations and two-call answers through ``LongContextVLLM`` on the real vLLM engine (its CPU
build), in one small ``opencompass`` run: MRCR records as chat messages (OpenAI's conversation,
MRCR v2's one-message transcript), too long for the window, and LongBench v2's chain of thought.
What the engine received and generated is read from vLLM's own objects (``tests/vllm_spy``); the
references start from the raw files and the tokenizer's chat template.

The same kinds of records served by ``ServeOnceRunner`` give the predictions of the engine in
process: ``tests/serving/test_serve_vllm.py``.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from official import longbench_v2_prompt
from runs import load_config, run_opencompass
from servers import VLLM_ENGINE_KWARGS, VLLM_ENV, VLLM_SIZE, require_vllm

pytestmark = [pytest.mark.slow, pytest.mark.vllm]
SPY = Path(__file__).resolve().parents[1] / 'vllm_spy'
WINDOW = 4096
ANSWER = 1024  # both benchmarks' first answer length
BODY_START = '======== EXAMPLE 3 ========\n\n'


@pytest.fixture(scope='module')
def conversation_run(tmp_path_factory, hf_tokenizers):
    require_vllm()
    from opencompass_lveval.cli import main
    from opencompass_lveval.framework.benchmarks import named
    from opencompass_lveval.testing import save_tiny_llama

    root = tmp_path_factory.mktemp('vllm_conversations')
    data = root / 'data'
    assert main(['data', 'synth', str(data), '--mrcr-count', '2', '--longbench-v2-count', '6']) == 0
    model = save_tiny_llama(root / 'llama2', WINDOW, hf_tokenizers['llama2'], **VLLM_SIZE)
    mrcr = named('mrcr')
    datasets = [
        mrcr.cell_config('openai_2needle', '8k', str(data / 'mrcr'), tokens='words'),
        mrcr.cell_config('v2_2needle', '8k', str(data / 'mrcr')),
        *named('longbench_v2').configs(str(data / 'longbench_v2'), tasks=['cot'], sizes=['short']),
    ]
    cfg = load_config('eval_demo.py')
    cfg.datasets = datasets
    cfg.models = [
        dict(
            type='opencompass_lveval.models.vllm.LongContextVLLM',
            abbr='tiny-llama2',
            path=str(model),
            max_seq_len=WINDOW,
            model_kwargs=dict(VLLM_ENGINE_KWARGS),
            batch_size=4,
            run_cfg=dict(num_gpus=0),
        )
    ]
    cfg.infer.runner.max_num_workers = 1
    config = root / 'config.py'
    cfg.dump(str(config))
    spy = root / 'spy.jsonl'
    env = {**VLLM_ENV, 'VLLM_SPY_FILE': str(spy), 'HF_HUB_OFFLINE': '1'}
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(SPY), os.environ.get('PYTHONPATH')]))
    run_opencompass(config, root, env, '-m', 'infer')
    requests = [json.loads(line) for line in spy.read_text().splitlines()]
    run = sorted((root / 'out').iterdir())[-1]
    return run, data, [r for r in requests if r['event'] == 'request']


def template_ids(tokenizer, messages: list[dict]) -> list[int]:
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return tokenizer.encode(text, add_special_tokens=False)


def predictions(run: Path, abbr: str) -> list[dict]:
    found = json.loads((run / 'predictions' / 'tiny-llama2' / f'{abbr}.json').read_text())
    return [found[key] for key in sorted(found, key=int)]


def fewest_dropped(tokenizer, candidates: list[list[dict]]) -> list[int]:
    """The ids of the first candidate (fewer turns dropped first) that leaves the answer room."""
    for messages in candidates:
        ids = template_ids(tokenizer, messages)
        if len(ids) <= WINDOW - ANSWER:
            return ids
    raise AssertionError('no candidate fits')


def test_openai_conversations_reach_the_engine_without_their_earliest_exchanges(
    conversation_run, hf_tokenizers
):
    import pyarrow.parquet as pq

    run, data, requests = conversation_run
    tokenizer = hf_tokenizers['llama2']
    rows = pq.read_table(data / 'mrcr' / 'openai' / '2needle' / '2needle_0.parquet').to_pylist()
    received = {tuple(r['prompt_token_ids']): r['text'] for r in requests}
    entries = predictions(run, 'MRCR_openai_2needle_8k')
    assert len(entries) == len(rows) == 2
    for row, entry in zip(rows, entries):
        messages = json.loads(row['prompt'])
        candidates = [messages[2 * k :] for k in range(len(messages) // 2)]
        ids = fewest_dropped(tokenizer, candidates)
        assert tuple(ids) in received and ids != template_ids(tokenizer, messages)
        assert entry['prediction'] == received[tuple(ids)]
        assert entry['usage']['prompt_tokens'] == len(ids) and entry['usage']['truncated']


def test_a_v2_transcript_reaches_the_engine_cut_by_whole_turns(conversation_run, hf_tokenizers):
    run, data, requests = conversation_run
    tokenizer = hf_tokenizers['llama2']
    name = 'mrcr_v2p1_2needle_in_(4096,8192)_dynamic_fewshot_text_style_fast.csv'
    with open(data / 'mrcr' / 'v2' / name, encoding='utf-8', newline='') as stream:
        rows = list(csv.DictReader(stream))
    received = {tuple(r['prompt_token_ids']): r['text'] for r in requests}
    entries = predictions(run, 'MRCR_v2_2needle_8k')
    assert len(entries) == len(rows) == 2
    for row, entry in zip(rows, entries):
        text = row['queries']
        start = text.index(BODY_START) + len(BODY_START)
        end = text.rindex('User: Prepend ')
        turns = [at for at in range(start, end) if text.startswith('User: Write a ', at)]
        candidates = [
            [{'role': 'user', 'content': text[:start] + text[at:]}] for at in turns + [end]
        ]
        ids = fewest_dropped(tokenizer, candidates)
        assert tuple(ids) in received and entry['prediction'] == received[tuple(ids)]


def test_chain_of_thought_asks_for_the_answer_with_the_engines_first_reply(
    conversation_run, hf_tokenizers
):
    """The second request is the answer prompt of the record and the engine's first reply,
    under the chat template; the prediction is the engine's second text; usage counts both."""
    from opencompass_lveval.longbench_v2 import prompts

    run, data, requests = conversation_run
    tokenizer = hf_tokenizers['llama2']
    written = json.loads((data / 'longbench_v2' / 'data.json').read_text())
    records = [record for record in written if record['length'] == 'short']
    by_ids = {tuple(r['prompt_token_ids']): r for r in requests}
    entries = predictions(run, 'LongBenchV2_cot_short')
    assert len(entries) == len(records) == 2
    for record, entry in zip(records, entries):
        first_prompt = longbench_v2_prompt(prompts.COT, record)
        first = by_ids[tuple(template_ids(tokenizer, [{'role': 'user', 'content': first_prompt}]))]
        assert entry['first_reply'] == first['text']
        if first['text'] == '':
            assert entry['answer_prompt'] is None and entry['prediction'] == ''
            continue
        answer_prompt = longbench_v2_prompt(prompts.COT_ANSWER, record, reasoning=first['text'])
        second_ids = template_ids(tokenizer, [{'role': 'user', 'content': answer_prompt}])
        second = by_ids[tuple(second_ids)]
        assert entry['answer_prompt'] == answer_prompt
        assert entry['prediction'] == second['text']
        assert entry['usage']['prompt_tokens'] == len(first['prompt_token_ids']) + len(second_ids)
        assert entry['usage']['completion_tokens'] == len(first['token_ids']) + len(
            second['token_ids']
        )
