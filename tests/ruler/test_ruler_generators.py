"""The generators against the official RULER output: the golden files byte for byte, the
official binary-search probes, the word lists, and the errors where the official code loops."""

from __future__ import annotations

import re

import pytest
from conftest import GOLDEN, LLAMA2_SP, PUNKT, STAND_IN, golden_files, golden_text

from opencompass_lveval.ruler import inputs as files
from opencompass_lveval.ruler.build import generate, manifest_text
from opencompass_lveval.ruler.generators import RulerBuildError

# One file per generator kind that builds in a tenth of a second (the essay haystack needs nltk,
# whose import alone takes 2 s: the slow tests build those); the slow test builds all 30
# through `lveval build ruler`.
FAST = [
    (4096, 'niah_single_1'),
    (4096, 'niah_multikey_3'),
    (4096, 'vt'),
    (4096, 'cwe'),
    (4096, 'fwe'),
    (4096, 'qa_2'),
]


@pytest.mark.parametrize(('length', 'task'), FAST)
def test_golden_files_are_generated_byte_for_byte(length, task, llama2_counter):
    job = generate(task, length, llama2_counter, STAND_IN, count=10, punkt=PUNKT)
    assert manifest_text(job.records) == golden_text(length, task)


@pytest.mark.slow
def test_all_30_golden_files_from_lveval_build_ruler(tmp_path, inputs, capsys):
    """The user's path: the command, the tokenizer folder loaded by transformers, two workers."""
    from opencompass_lveval.cli import main

    assert len(golden_files()) == 30
    for lengths, tasks in (
        ([4096, 8192], ['all']),
        ([16384], ['niah_single_2', 'vt', 'cwe', 'qa_1']),
    ):
        argv = ['build', 'ruler', '--task', *tasks, '--length', *map(str, lengths)]
        argv += ['--tokenizer', str(LLAMA2_SP), '--count', '10', '--inputs', str(inputs)]
        assert main([*argv, '--out', str(tmp_path / 'out'), '--workers', '2']) == 0
    for length, task in golden_files():
        built = tmp_path / 'out' / str(length) / task / 'validation.jsonl'
        assert (
            built.read_bytes()
            == (GOLDEN / 'data' / str(length) / task / 'validation.jsonl').read_bytes()
        )
    assert '30 files' not in capsys.readouterr().out  # two commands: 26 and 4 files


def official_probes(log: str) -> list[tuple[int, int]]:
    """The (size, tokens) lines the official cwe generator logged."""
    found = re.findall(r'Testing haystack size: (\d+), resulting tokens: (\d+)/\d+', log)
    return [(int(size), int(tokens)) for size, tokens in found]


@pytest.mark.parametrize('length', [4096, 8192])
def test_the_binary_search_probes_are_the_official_ones(length, llama2_counter):
    log = (GOLDEN / 'logs' / f'{length}_cwe.rerun_stderr.txt').read_text(encoding='utf-8')
    job = generate('cwe', length, llama2_counter, STAND_IN, count=10)
    assert job.probes == official_probes(log) and len(job.probes) >= 8


def _every_key(adjectives, nouns) -> list[str]:
    return sorted({f'{adjective}-{noun}' for adjective in adjectives for noun in nouns})


def test_needle_keys_are_the_sorted_list_without_building_it():
    """Stems that prefix others (blue-, blue-eyed-), spaces, capitals and repeats, as in the
    wonderwords lists."""
    adjectives = [
        'blue',
        'blue-eyed',
        'ad hoc',
        'Early',
        'early',
        'x',
        'x-rated',
        'teeny',
        'red',
        'red',
    ]
    nouns = ['eyed-cat', 'rated', 'arm-rest', 'TV', 'cat', 'cat', 'dump truck', 'tiny', 'a']
    view = files.AdjectiveNounWords(adjectives, nouns)
    assert [view[i] for i in range(len(view))] == _every_key(adjectives, nouns)
    with pytest.raises(IndexError):
        view[len(view)]


@pytest.mark.slow
def test_needle_keys_equal_rulers_list_for_wonderwords_2_2_0():
    lists = files.wonderwords_lists()
    view = files.needle_words()
    expected = _every_key(lists['adjective'], lists['noun'])
    assert len(view) == len(expected) == 6_175_260
    assert all(view[i] == expected[i] for i in range(0, len(expected), 997))
    assert [view[i] for i in range(len(view))] == expected


def test_wonderwords_other_than_2_2_0_is_refused(monkeypatch):
    from importlib import metadata

    files.wonderwords_lists.cache_clear()
    monkeypatch.setattr(metadata, 'version', lambda name: '3.0.1')
    with pytest.raises(files.RulerInputError, match=r'pip install wonderwords==2\.2\.0'):
        files.wonderwords_lists()
    monkeypatch.undo()
    files.wonderwords_lists.cache_clear()
    assert len(files.wonderwords_lists()['noun']) == 6786


@pytest.mark.slow
def test_sentences_split_as_nltks_sent_tokenize(tmp_path):
    import nltk.data
    from nltk.tokenize import sent_tokenize

    with pytest.raises(files.RulerInputError, match='punkt_tab English model'):
        files.punkt_folder(tmp_path / 'nowhere')

    text = ' '.join(files.essay_words(STAND_IN)[:3000])
    nltk.data.path.insert(0, str(PUNKT.parents[2]))
    try:
        assert files.sentence_splitter(PUNKT)(text) == sent_tokenize(text)
    finally:
        nltk.data.path.remove(str(PUNKT.parents[2]))


def test_a_budget_nothing_fits_in_is_an_error_not_a_loop(llama2_counter):
    with pytest.raises(RulerBuildError, match='give a larger --length'):
        generate('niah_single_1', 140, llama2_counter, count=1)


def test_more_samples_than_questions_is_an_error(llama2_counter):
    with pytest.raises(RulerBuildError, match='60 questions.*--count 60 or less'):
        generate('qa_1', 4096, llama2_counter, STAND_IN, count=61)


def test_a_missing_input_names_the_file(tmp_path, llama2_counter):
    with pytest.raises(files.RulerInputError, match=r'squad\.json: not found'):
        generate('qa_1', 4096, llama2_counter, tmp_path, count=1)


def test_punkt_comes_only_from_nltk_datas_zip(tmp_path):
    import zipfile

    wheel = tmp_path / 'llama_index_core-0.14.25-py3-none-any.whl'
    with zipfile.ZipFile(wheel, 'w') as packed:
        packed.writestr('llama_index/core/_static/nltk_cache/tokenizers/punkt_tab.zip', b'other')
    with pytest.raises(files.RulerInputError, match='not the official one'):
        files.extract_punkt(wheel, tmp_path / 'out')
    with zipfile.ZipFile(wheel, 'w') as packed:
        packed.writestr('other.txt', b'')
    with pytest.raises(files.RulerInputError, match='pip download --no-deps llama-index-core'):
        files.extract_punkt(wheel, tmp_path / 'out')
