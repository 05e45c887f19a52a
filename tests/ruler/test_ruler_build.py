"""Building files: the per-model cache (a second build reuses, a changed tokenizer file
rebuilds), determinism, and a hidden-set-like build with another tokenizer and seed that keeps
the budget and the official fields."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import LLAMA2_SP, STAND_IN

from opencompass_lveval.ruler.build import build, data_path
from opencompass_lveval.ruler.generators import RulerBuildError
from opencompass_lveval.ruler.tasks import task_named
from opencompass_lveval.ruler.tokens import tokenizer_fingerprint, tokenizer_json_counter

QUICK = ['niah_single_1', 'vt', 'fwe']


def _snapshot(folder) -> dict:
    return {
        p.relative_to(folder): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in folder.rglob('*.jsonl')
    }


def test_a_second_build_reuses_and_a_changed_tokenizer_file_rebuilds(tmp_path, llama2_counter):
    out, logged = tmp_path / 'cache', []

    def cached(counter) -> None:
        options = dict(seed=3, count=2, reuse=True, log=logged.append, workers=1)
        build(None, QUICK, [4096], out, counter=counter, **options)

    cached(llama2_counter)
    assert len(logged) == 3 and all(data_path(out, t, 4096).is_file() for t in QUICK)
    first = _snapshot(out)
    cached(llama2_counter)
    assert len(logged) == 3 and _snapshot(out) == first  # nothing built, nothing touched

    changed = tmp_path / 'llama2_changed'
    shutil.copytree(LLAMA2_SP, changed)
    config = json.loads((changed / 'tokenizer_config.json').read_text())
    (changed / 'tokenizer_config.json').write_text(json.dumps({**config, 'model_max_length': 4096}))
    assert tokenizer_fingerprint(changed) != tokenizer_fingerprint(LLAMA2_SP)
    cached(tokenizer_json_counter(changed))
    assert len(logged) == 6  # all three built again
    key = json.loads(data_path(out, 'vt', 4096).with_name('validation.jsonl.key.json').read_text())
    assert key['tokenizer'] == tokenizer_fingerprint(changed) and key['seed'] == 3


def test_a_changed_input_rebuilds_only_its_task(tmp_path, llama2_counter):
    inputs = tmp_path / 'inputs'
    shutil.copytree(STAND_IN, inputs)
    out, logged = tmp_path / 'cache', []
    options = dict(count=2, counter=llama2_counter, reuse=True, log=logged.append, workers=1)
    build(None, ['qa_1', 'qa_2'], [4096], out, inputs, **options)
    squad = json.loads((inputs / 'squad.json').read_text())
    squad['data'][0]['paragraphs'][0]['context'] += ' More.'
    (inputs / 'squad.json').write_text(json.dumps(squad))
    build(None, ['qa_1', 'qa_2'], [4096], out, inputs, **options)
    assert [line.split('/')[-2] for line in logged] == ['qa_1', 'qa_2', 'qa_1']


def test_builds_are_deterministic_and_the_seed_matters(tmp_path, llama2_counter):
    for name, seed in (('a', 7), ('b', 7), ('c', 8)):
        build(
            None,
            QUICK,
            [4096],
            tmp_path / name,
            seed=seed,
            count=3,
            counter=llama2_counter,
            workers=1,
        )
    for task in QUICK:
        a, b, c = (data_path(tmp_path / n, task, 4096).read_bytes() for n in 'abc')
        assert a == b != c


def check_file(path, length: int, task: str, count: int, counter) -> None:
    """What the hidden golden set will hold of any file: the official fields in order, the length
    recounted, the budget kept, niah's index the answer's offset."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == count
    row = task_named(task)
    for number, record in enumerate(records):
        fields = ['index', 'input', 'outputs', 'length', 'length_w_model_temp', 'answer_prefix']
        assert list(record) == fields + (['token_position_answer'] if row.kind == 'niah' else [])
        text = record['input'] + record['answer_prefix']
        assert record['length'] == counter(text) + row.tokens_to_generate <= length
        assert record['answer_prefix'].startswith(row.answer_prefix[:10])
        if row.kind == 'niah':
            assert record['index'] == record['input'].find(record['outputs'][0]) >= 0
            assert record['token_position_answer'] == counter(record['input'][: record['index']])
        else:
            assert record['index'] == number
        if row.kind != 'freq_words_extraction':
            assert all(answer in record['input'] for answer in record['outputs'][:1])


@pytest.mark.parametrize(
    ('length', 'tasks'),
    [
        (2048, ['niah_single_1', 'vt', 'cwe', 'fwe']),  # below 4096: smaller steps, cwe's example
        (4096, ['niah_multikey_2', 'niah_multikey_3', 'qa_1']),
    ],
)
def test_another_seed_keeps_the_budget_and_the_official_fields(
    tmp_path, llama2_counter, length, tasks
):
    options = dict(seed=1234, count=2, counter=llama2_counter, workers=1)
    build(None, tasks, [length], tmp_path, STAND_IN, **options)
    for task in tasks:
        check_file(data_path(tmp_path, task, length), length, task, 2, llama2_counter.count)


def test_a_sample_that_never_fits_is_an_error_where_the_official_code_hangs(
    tmp_path, llama2_counter
):
    """At 2048 tokens seed 1234 draws a HotpotQA sample whose ten paragraphs do not fit:
    the official loop shrinks below ten documents and retries forever."""
    with pytest.raises(RulerBuildError, match='qa_2: no sample fits'):
        build(
            None,
            ['qa_2'],
            [2048],
            tmp_path,
            STAND_IN,
            seed=1234,
            count=3,
            counter=llama2_counter,
            workers=1,
        )


@pytest.mark.slow
def test_a_hidden_like_set_another_tokenizer_and_seed(tmp_path, tokenizer_folders, inputs):
    """As the hidden golden set is made: Qwen's tokenizer folder through AutoTokenizer, seed 7,
    every task, through the command; built twice, the same bytes."""
    from transformers import AutoTokenizer

    from opencompass_lveval.cli import main

    folder = tokenizer_folders['qwen']
    for out in ('a', 'b'):
        argv = ['build', 'ruler', '--task', 'all', '--length', '4096', '--tokenizer', str(folder)]
        argv += [
            '--seed',
            '7',
            '--count',
            '3',
            '--inputs',
            str(inputs),
            '--out',
            str(tmp_path / out),
        ]
        assert main(argv) == 0
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    for task in [
        t.name for t in __import__('opencompass_lveval.ruler.tasks', fromlist=['TASKS']).TASKS
    ]:
        path = data_path(tmp_path / 'a', task, 4096)
        assert path.read_bytes() == data_path(tmp_path / 'b', task, 4096).read_bytes()
        check_file(path, 4096, task, 3, lambda text: len(tokenizer.tokenize(text)))


@pytest.mark.slow
def test_model_data_is_built_once_per_tokenizer_and_reused(tmp_path, inputs):
    """The library's per-model cache with the tokenizer loaded by transformers: its pipeline is
    kept, and equals tokenizer.json for llama2_sp (what the fast tests count with)."""
    import time

    from opencompass_lveval.ruler.build import model_data

    start = time.perf_counter()
    folder = model_data(LLAMA2_SP, tmp_path, QUICK, [4096], inputs, count=2)
    first = time.perf_counter() - start
    saved = list((tmp_path / 'tokenizers').glob('*.tokenizer.json'))
    assert len(saved) == 1
    pipeline = json.loads(json.loads(saved[0].read_text())['pipeline'])
    assert pipeline == json.loads((LLAMA2_SP / 'tokenizer.json').read_text())
    before = _snapshot(folder)
    start = time.perf_counter()
    assert model_data(LLAMA2_SP, tmp_path, QUICK, [4096], inputs, count=2) == folder
    assert _snapshot(folder) == before and time.perf_counter() - start < first
