"""Keys that mean what they say: the reply key changes with everything that changes an answer and
with nothing else; and a reply is checked against the request it answers."""

from __future__ import annotations

import json
import os
from unittest import mock

import pytest

from opencompass_lveval.serving.request import (
    ReplyFault,
    check_reply,
    engine_identity,
    ids_digest,
    planned_request,
    request_key,
)

SAMPLING = {'temperature': 0, 'max_tokens': 64, 'stop': ['</s>']}


@pytest.fixture
def model(tmp_path):
    folder = tmp_path / 'model'
    folder.mkdir()
    config = {'hidden_size': 64, 'max_position_embeddings': 4096, 'vocab_size': 100}
    (folder / 'config.json').write_text(json.dumps(config))
    (folder / 'model.safetensors').write_bytes(b'weights' * 100)
    return {'abbr': 'm', 'path': str(folder), 'max_seq_len': 4096, 'model_kwargs': {}}


def identity(model_cfg, server_argv=None, env=None, secrets=()) -> str:
    return engine_identity(model_cfg, server_argv, env or {}, secrets)


def test_what_changes_answers_changes_the_engine(model, monkeypatch):
    base = identity(model)
    assert base == identity(dict(model))  # the same engine twice
    changed = {
        'dtype': identity({**model, 'model_kwargs': {'dtype': 'bfloat16'}}),
        'window': identity({**model, 'max_seq_len': 2048}),
        'remote code': identity({**model, 'trust_remote_code': True}),
        'quantization': identity({**model, 'model_kwargs': {'quantization': 'awq'}}),
        'server command': identity(model, ['python', '-m', 'stand_in', '--port', '{port}']),
        'output environment': identity(model, env={'VLLM_ATTENTION_BACKEND': 'FLASHINFER'}),
    }
    with mock.patch.dict(os.environ, {'VLLM_USE_V1': '0'}):
        changed['driver environment'] = identity(model)
    monkeypatch.setattr('opencompass_lveval.models.vllm.installed_vllm_version', lambda: '0.6.4')
    changed['vLLM version'] = identity(model)
    monkeypatch.undo()
    weights = os.path.join(model['path'], 'model.safetensors')
    with open(weights, 'wb') as stream:  # rewritten in place, same size
        stream.write(b'WEIGHTS' * 100)
    changed['weights rewritten'] = identity(model)
    assert base not in changed.values(), [name for name, key in changed.items() if key == base]
    assert len(set(changed.values())) == len(changed)


def test_memory_and_throughput_knobs_leave_the_engine_alone(model):
    base = identity(model)
    for knob in (
        {'gpu_memory_utilization': 0.5},
        {'max_num_seqs': 4},
        {'enforce_eager': True},
        {'tensor_parallel_size': 2},
        {'max_num_batched_tokens': 8192},
        {'enable_prefix_caching': False},
    ):
        assert identity({**model, 'model_kwargs': knob}) == base, knob
    assert identity(model, env={'VLLM_CPU_KVCACHE_SPACE': '40', 'OMP_NUM_THREADS': '8'}) == base
    assert identity(model, env={'HF_TOKEN': 'hf_x'}, secrets=('HF_TOKEN',)) == base


def test_the_key_changes_with_ids_and_sampling():
    digest = ids_digest([1, 2, 3])
    key = request_key('e', digest, SAMPLING)
    assert key == request_key('e', ids_digest((1, 2, 3)), dict(reversed(SAMPLING.items())))
    others = [
        request_key('e', ids_digest([1, 2, 4]), SAMPLING),
        request_key('e', digest, {**SAMPLING, 'max_tokens': 16}),
        request_key('e', digest, {**SAMPLING, 'stop': []}),
        request_key('e', digest, {**SAMPLING, 'temperature': 0.7}),
        request_key('f', digest, SAMPLING),
    ]
    assert key not in others and len(set(others)) == len(others)


def completion(request, **changes) -> dict:
    reply = {
        'model': request.model,
        'choices': [{'text': 'Paris', 'finish_reason': 'stop'}],
        'usage': {'prompt_tokens': request.prompt_tokens, 'completion_tokens': 2},
    }
    return {**reply, **changes}


@pytest.mark.parametrize(
    ('change', 'said'),
    [
        ({'choices': []}, 'holds 0 choices, and one was asked for'),
        ({'choices': [{'text': 'a'}, {'text': 'b'}]}, 'holds 2 choices'),
        ({'choices': [{'text': None}]}, 'the reply has no text'),
        ({'model': 'another'}, "names the model 'another'"),
        ({'usage': {'prompt_tokens': 9, 'completion_tokens': 2}}, 'counts 9 prompt tokens'),
        ({'usage': {'prompt_tokens': 3, 'completion_tokens': 3200}}, '3200 completion tokens'),
        ({'usage': None}, 'counts no tokens'),
    ],
)
def test_a_reply_not_of_its_request_is_a_fault(change, said):
    asked = planned_request('e', [1, 2, 3], SAMPLING)
    assert check_reply(completion(asked), asked)['text'] == 'Paris'
    with pytest.raises(ReplyFault, match=said):
        check_reply(completion(asked, **change), asked)
