"""Model wrappers without a GPU: a fake vLLM engine, a tiny random Llama, the CPU baselines."""

import json
import types

import pytest

from opencompass_lveval.lveval.synthetic import synthetic_records
from opencompass_lveval.lveval.tasks import TASKS_BY_NAME
from opencompass_lveval.models import (
    ExtractiveBaseline,
    LongContextHF,
    LongContextVLLM,
    RandomGuessBaseline,
)
from opencompass_lveval.models import vllm as vllm_module
from opencompass_lveval.testing import save_tiny_llama, train_tokenizer
from opencompass_lveval.truncation import TruncationError

LONG_PROMPT = TASKS_BY_NAME['loogle_SD_mixup'].prompt.format(
    context='the river flows north past the mill. ' * 300, input='Who built the mill?'
)


class FakeEngine:
    """Stands in for vllm.LLM: records what it is sent, answers with a fixed text."""

    def __init__(self, path, **kwargs):
        self.kwargs = kwargs
        self.tokenizer = train_tokenizer()
        self.calls = []

    def get_tokenizer(self):
        return self.tokenizer

    def generate(self, prompts, params, use_tqdm=True):
        self.calls.append((prompts, params))
        return [
            types.SimpleNamespace(outputs=[types.SimpleNamespace(text='the miller')])
            for _ in prompts
        ]


@pytest.fixture
def fake_vllm(monkeypatch):
    monkeypatch.setattr(
        vllm_module, 'load_engine', lambda path, kwargs: (FakeEngine(path, **kwargs), dict)
    )


def test_vllm_wrapper_sends_truncated_token_ids(fake_vllm):
    model = LongContextVLLM(path='fake', max_seq_len=300, model_kwargs={'tensor_parallel_size': 4})
    assert model.engine.kwargs == {
        'max_model_len': 300,
        'trust_remote_code': True,
        'tensor_parallel_size': 4,
    }
    assert model.generate([LONG_PROMPT, 'Question: short?'], max_out_len=64) == ['the miller'] * 2
    prompts, params = model.engine.calls[0]
    long_ids, short_ids = (p['prompt_token_ids'] for p in prompts)
    assert len(long_ids) == 300 - 64
    text = model.tokenizer.decode(long_ids)
    assert text.startswith('<|user|>\nPlease answer the following question')
    assert text.endswith('Question: Who built the mill?\nAnswer:<|end|>\n<|assistant|>\n')
    assert model.tokenizer.decode(short_ids) == '<|user|>\nQuestion: short?<|end|>\n<|assistant|>\n'
    assert params['temperature'] == 0 and params['max_tokens'] == 64
    assert '</s>' in params['stop']


def test_vllm_base_model_gets_only_bos(fake_vllm):
    model = LongContextVLLM(path='fake', max_seq_len=200, chat=False)
    model.generate([LONG_PROMPT], max_out_len=16)
    ids = model.engine.calls[0][0][0]['prompt_token_ids']
    assert len(ids) == 200 - 16 and ids[0] == model.tokenizer.bos_token_id
    assert model.get_token_len(LONG_PROMPT) > 200


def test_vllm_window_too_small_is_a_clear_error(fake_vllm):
    model = LongContextVLLM(path='fake', max_seq_len=70)
    with pytest.raises(TruncationError, match='raise max_seq_len'):
        model.generate([LONG_PROMPT], max_out_len=64)


def test_vllm_missing_gives_install_hint():
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match='LongContextVLLM needs vLLM'):
            LongContextVLLM(path='anything', max_seq_len=1024)
    else:
        pytest.skip('vLLM is installed here; the missing-vLLM message cannot be shown')


@pytest.fixture(scope='module')
def tiny_llama(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp('tiny_llama'))


def test_hf_wrapper_feeds_the_model_exactly_the_budget(tiny_llama):
    model = LongContextHF(path=str(tiny_llama), max_seq_len=160, model_kwargs={'device_map': 'cpu'})
    seen = []
    generate = model.model.generate

    def spy(**kwargs):
        seen.append(kwargs['input_ids'])
        return generate(**kwargs)

    model.model.generate = spy
    outputs = model.generate([LONG_PROMPT, 'Question: short?'], max_out_len=8)
    assert len(outputs) == 2 and all(isinstance(o, str) for o in outputs)
    batch = seen[0]
    assert batch.shape[1] == 160 - 8  # the long prompt fills the budget; the short one is padded
    tokenizer = model.tokenizer
    long_text = tokenizer.decode(batch[0].tolist())
    assert long_text.startswith('<|user|>\nPlease answer the following question')
    assert long_text.endswith('Answer:<|end|>\n<|assistant|>\n')
    short = [t for t in batch[1].tolist() if t != tokenizer.pad_token_id]
    assert tokenizer.decode(short) == '<|user|>\nQuestion: short?<|end|>\n<|assistant|>\n'


def test_extractive_baseline_finds_the_fact():
    task = TASKS_BY_NAME['hotpotwikiqa_mixup']
    record = synthetic_records(task, '64k', count=1, scale=100, seed=3)[0]
    prompt = task.prompt.format(context=record['context'], input=record['input'])
    answer = ExtractiveBaseline().generate([prompt], max_out_len=64)[0]
    assert record['answers'][0] in answer
    assert 'founded' not in answer.lower()  # the question's own words are removed
    zh = TASKS_BY_NAME['lic_mixup']
    record = synthetic_records(zh, '32k', count=1, scale=100, seed=3)[0]
    answer = ExtractiveBaseline().generate([zh.prompt.format(**record)], max_out_len=64)[0]
    assert record['answers'][0] in answer and '建立' not in answer


def test_random_guess_gives_valid_seeded_answers():
    tsort = 'sort ... into the correct order ... Part 1: a\n\nPart 4: d\n\nAnswer:'
    bestanswer = 'The question is given below.\nq\n\nPossible answers are given below.\n' + ''.join(
        f'A{j}:\n\nanswer {j}\n\n' for j in range(1, 8)
    )
    model = RandomGuessBaseline(seed=1)
    orders = [json.loads(model.answer(tsort + str(i), 0)[len('Answer: ') :]) for i in range(30)]
    assert all(sorted(o) == [1, 2, 3, 4] for o in orders)
    assert len({tuple(o) for o in orders}) > 5
    picks = {model.answer(bestanswer + str(i), 0) for i in range(60)}
    assert picks == {f'Answer: A{j}' for j in range(1, 8)}
    assert model.generate([tsort, bestanswer], 0) == model.generate([tsort, bestanswer], 0)
    assert RandomGuessBaseline(seed=2).generate(
        [tsort + 'x' * i for i in range(10)], 0
    ) != model.generate([tsort + 'x' * i for i in range(10)], 0)
