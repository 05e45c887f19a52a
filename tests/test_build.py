"""Builders: lengths, needles, confusing facts, replacements, determinism, and loading back."""

import json
import random

import pytest

from opencompass_lveval.adaleval.build import (
    TSORT_LIMITS,
    bestanswer_records,
    build_bestanswer,
    build_tsort,
    token_counter,
    tsort_records,
)
from opencompass_lveval.adaleval.data import load_task
from opencompass_lveval.cli import main
from opencompass_lveval.lveval.build import (
    NEEDLES,
    QAItem,
    build_factrecall,
    build_mixup,
    build_replica,
    needle_offsets,
)
from opencompass_lveval.lveval.data import check_folder, locate, read_subset
from opencompass_lveval.prompts.text import book_paragraphs, replacer

SENTENCE = 'The {} river runs past the {} mill and the old stone bridge near town.'


def documents(n, seed):
    rng = random.Random(seed)
    return [
        ' '.join(
            SENTENCE.format(
                rng.choice(['north', 'south', 'east', 'west']), rng.choice(['red', 'blue', 'green'])
            )
            for _ in range(12)
        )
        for _ in range(n)
    ]


@pytest.fixture
def items():
    docs = documents(40, 0)
    return [
        QAItem(
            f'Who keeps mill {i}?',
            [f'Keeper Ottoline {i}'],
            [docs[i] + f' Keeper Ottoline {i} keeps mill {i}.'],
            answer_keywords='Ottoline',
            confusing_facts=[f'Keeper Bramwell {i} once visited mill {i + 1}.'],
        )
        for i in range(6)
    ], docs[6:]


def read(path):
    return [json.loads(line) for line in open(path, encoding='utf-8')]


def test_mixup_lengths_facts_rules_and_same_questions(tmp_path, items):
    qa, pool = items
    rules = [('Ottoline', 'Quillfeather'), ('stone bridge', 'iron viaduct')]
    paths = build_mixup(
        qa,
        'hotpotwikiqa_mixup',
        'en',
        tmp_path / 'main',
        rules,
        levels=['16k', '32k'],
        seed=3,
        scale=20,
        pool=pool,
    )
    by_level = [read(p) for p in paths]
    for records, target in zip(by_level, (800, 1600)):
        for record, item in zip(records, qa):
            assert abs(record['length'] - target) <= 0.02 * target
            context = record['context']
            assert context.startswith('Passage 0\n')
            assert 'Ottoline' not in context and 'stone bridge' not in context
            assert 'iron viaduct' in context
            assert record['answers'] == [item.answers[0].replace('Ottoline', 'Quillfeather')]
            assert record['answer_keywords'] == 'Quillfeather'
            number = item.input.split()[-1][:-1]
            assert f'Keeper Quillfeather {number} keeps mill {number}.' in context  # supporting
            assert context.count(f'Keeper Bramwell {number} once visited') == 1  # confusing fact
    assert [r['input'] for r in by_level[0]] == [r['input'] for r in by_level[1]]
    again = build_mixup(
        qa,
        'hotpotwikiqa_mixup',
        'en',
        tmp_path / 'again',
        rules,
        levels=['16k'],
        seed=3,
        scale=20,
        pool=pool,
    )
    assert again[0].read_bytes() == paths[0].read_bytes()
    other = build_mixup(
        qa,
        'hotpotwikiqa_mixup',
        'en',
        tmp_path / 'other',
        rules,
        levels=['16k'],
        seed=4,
        scale=20,
        pool=pool,
    )
    assert other[0].read_bytes() != paths[0].read_bytes()
    table = read_subset(locate(tmp_path / 'main', 'hotpotwikiqa_mixup_32k'))
    assert table.num_rows == 6


def test_mixup_switches_off_cfi_and_kpr(tmp_path, items):
    qa, pool = items
    path = build_mixup(
        qa,
        'hotpotwikiqa_mixup',
        'en',
        tmp_path,
        [('Ottoline', 'Quill')],
        levels=['16k'],
        scale=20,
        pool=pool,
        cfi=False,
        kpr=False,
    )[0]
    for record in read(path):
        assert 'Bramwell' not in record['context'] and 'Ottoline' in record['context']
        assert record['confusing_facts'] == []


def test_needle_offsets_are_strictly_increasing_and_evenly_spaced():
    text = ' '.join(f'Sentence number {i} is here.' for i in range(2000))
    offsets = needle_offsets(text, 'en', 200)
    assert all(b > a for a, b in zip(offsets, offsets[1:]))
    spacing = len(text) / 199
    assert all(abs(o - i * spacing) <= spacing / 2 for i, o in enumerate(offsets))
    assert offsets[0] == 0 or text[offsets[0] - 1] == '.'


@pytest.mark.parametrize('language', ['en', 'zh'])
def test_factrecall_needles_and_ablations(tmp_path, corpora, language):
    needle = NEEDLES[language]
    path = build_factrecall(language, tmp_path / 'both', corpora, ['16k'], count=25, scale=10)[0]
    records = read(path)
    published_fact = replacer(list(needle.rules), language)(needle.fact)
    published_answer = {'en': 'Ludwig Beethoven', 'zh': '贝多芬'}[language]
    depths = []
    for record in records:
        context = record['context']
        assert context.count(published_fact) == 1
        assert record['answers'] == [published_answer]
        assert len(record['confusing_facts']) == 2
        assert all(context.count(fact) == 1 for fact in record['confusing_facts'])
        assert needle.answer not in context  # replaced everywhere (KPR)
        assert abs(record['length'] - 1600) <= 0.02 * 1600
        for fact in record['confusing_facts']:  # depth in the haystack itself
            context = context.replace(fact, '')
        depths.append(context.index(published_fact) / len(context))
    assert all(b > a for a, b in zip(depths, depths[1:]))
    assert depths[0] < 0.05 and depths[-1] > 0.8  # the last needle ends the haystack
    plain = read(
        build_factrecall(
            language, tmp_path / 'none', corpora, ['16k'], count=3, scale=10, cfi=False, kpr=False
        )[0]
    )
    assert plain[0]['answers'] == [needle.answer]
    assert needle.fact in plain[0]['context'] and plain[0]['confusing_facts'] == []
    probe = read(
        build_factrecall(
            language, tmp_path / 'probe', corpora, ['16k'], count=3, scale=10, context=False
        )[0]
    )
    assert [r['context'] for r in probe] == ['', '', ''] and probe[0]['input'] == records[0][
        'input'
    ]


def test_factrecall_reproduces_the_published_english_texts(seeds):
    text = (seeds / 'lveval_paper_v2.txt').read_text(encoding='utf-8')
    needle = NEEDLES['en']

    published = replacer(list(needle.rules), 'en')  # whole words: "Gaussian" stays

    assert published(needle.fact)[:-1] in text
    assert all(published(fact) in text for fact in needle.confusing_facts)
    assert published(needle.question) in text


def test_factrecall_is_deterministic(tmp_path, corpora):
    first = build_factrecall('zh', tmp_path / 'a', corpora, ['16k'], count=5, scale=10, seed=7)[0]
    second = build_factrecall('zh', tmp_path / 'b', corpora, ['16k'], count=5, scale=10, seed=7)[0]
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.slow
def test_replica_has_the_release_shape_and_loads(tmp_path, corpora, monkeypatch):
    build_replica(corpora, tmp_path, scale=100, levels=['16k', '32k', '64k', '128k', '256k'])
    reports = list(check_folder(tmp_path))
    assert [r.subset for r in reports if not r.ok] == []  # 55 subsets, official QA counts
    from pathlib import Path

    from opencompass_lveval.commands.dry_run import check_config

    monkeypatch.setenv('LVEVAL_DATA_DIR', str(tmp_path))
    checks = check_config(str(Path(__file__).resolve().parents[1] / 'configs' / 'eval_lveval.py'))
    assert len(checks) == 55 and all(c.official_prompt for c in checks)
    hotpot = read(tmp_path / 'hotpotwikiqa_mixup_256k.jsonl')
    assert all(abs(r['length'] - 2560) <= 0.02 * 2560 for r in hotpot)
    assert all(len(r['confusing_facts']) == 2 for r in hotpot)


def test_tsort_cases_follow_the_limits_and_restore_the_order(tmp_path, corpora):
    counter = token_counter('words')
    book = corpora / 'en' / 'dracula.txt'
    paragraphs = book_paragraphs(book)
    records = tsort_records(paragraphs, '4k', 5, counter, seed=1)
    part = TSORT_LIMITS['4k'][1]
    assert len(records) == 5
    for number, record in enumerate(records):
        assert sorted(record['answer']) == [1, 2, 3, 4]
        assert record['para_offset'] == sorted(record['para_offset'])
        body = record['prompt'].rpartition('Before: ')[2]
        shown = [
            body.split(f'Part {n}: ')[1].split('\n\n\nPart ')[0].split('\n\n\nAfter: ')[0]
            for n in range(1, 5)
        ]
        ordered = [shown[n - 1] for n in record['answer']]
        assert (
            ordered[0].split('\n')[0]
            == paragraphs[record['para_offset'][0]][: len(ordered[0].split('\n')[0])]
        )
        assert all(counter.count(text) <= part for text in shown)
        if number:  # cases start `stride` paragraphs apart, so they move forward
            assert record['para_offset'][0] > records[number - 1]['para_offset'][0]


@pytest.mark.slow
def test_tsort_and_bestanswer_files_load(tmp_path, corpora, stackselect_dir):
    from opencompass_lveval.testing import train_tokenizer

    tokenizer_dir = tmp_path / 'tok'
    train_tokenizer().save_pretrained(tokenizer_dir)
    assert token_counter(str(tokenizer_dir)).name.startswith('tokenizer:')
    books = [corpora / 'en' / 'frankenstein.txt', corpora / 'en' / 'dracula.txt']
    path = build_tsort(books, '2k', tmp_path, 8, tokenizer=str(tokenizer_dir))
    assert len(load_task('tsort', '2k', str(tmp_path), limit=1000)) == 8
    assert (
        build_tsort(books, '2k', tmp_path / 'again', 8, str(tokenizer_dir)).read_bytes()
        == path.read_bytes()
    )
    source = stackselect_dir / 'stackselect_1k.json'
    path = build_bestanswer(source, '4k', tmp_path, tokenizer='words')
    built = load_task('bestanswer', '4k', str(tmp_path), limit=100)
    original = json.loads(source.read_text(encoding='utf-8'))[:100]
    counter = token_counter('words')
    for new, old in zip(built, original):
        assert new['question_id'] == old['question_id']
        accepted = old['all_answers'][int(old['answer'][1:]) - 1]
        assert new['all_answers'][int(new['answer'][1:]) - 1] == accepted
        assert set(old['all_answers']) <= set(new['all_answers'])
        total = counter.count(new['question']) + sum(counter.count(a) for a in new['all_answers'])
        assert (
            total <= 4000
            or new['all_answers'] == old['all_answers']
            or len(new['all_answers']) == len(old['all_answers'])
        )
    assert sum(len(b['all_answers']) for b in built) > 2 * sum(
        len(o['all_answers']) for o in original
    )


def test_bestanswer_beyond_16k_needs_only_one_shared_tag():
    counter = token_counter('words')
    questions = [
        dict(question_id=str(i), question='q', all_answers=['a ' * 30] * 2, answer='A1', tags=tags)
        for i, tags in enumerate([['x', 'y', 'z'], ['x', 'p', 'q'], ['p', 'q', 'r']])
    ]
    short = bestanswer_records(questions, 10_000, counter)
    long = bestanswer_records(questions, 20_000, counter)
    assert len(short[0]['all_answers']) == 2  # 1/3 of tags shared: below 40%
    assert len(long[0]['all_answers']) == 4  # beyond 16k one shared tag is enough


def test_build_command(tmp_path, corpora, capsys):
    assert (
        main(
            [
                'build',
                'factrecall',
                '--language',
                'en',
                '--levels',
                '16k,32k',
                '--scale',
                '10',
                '--count',
                '4',
                '--corpora',
                str(corpora),
                '--out',
                str(tmp_path),
            ]
        )
        == 0
    )
    assert 'factrecall_en_32k.jsonl' in capsys.readouterr().out
    assert len(read(tmp_path / 'factrecall_en_32k.jsonl')) == 4
    assert (
        main(
            [
                'build',
                'factrecall',
                '--language',
                'en',
                '--corpora',
                str(tmp_path / 'nowhere'),
                '--out',
                str(tmp_path),
            ]
        )
        == 2
    )
    assert 'no *.txt books' in capsys.readouterr().err


def test_cl100k_base_is_the_default_token_count_offline(monkeypatch):
    """The Ada-LEval paper's tokenizer, always there: no hub, no cache, no estimate."""
    monkeypatch.delenv('TIKTOKEN_CACHE_DIR', raising=False)
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    counter = token_counter()
    assert counter.name == 'cl100k_base' == token_counter('auto').name
    # cl100k_base ids of this text, as OpenAI's tokenizer gives them: 'Hello', ' world', '!'
    assert counter.count('Hello world!') == 3
    assert counter.count('<|endoftext|> is text here') > 1  # special-token text counts as text
    assert counter.head('The quick brown fox', 2) == 'The quick'
    with pytest.raises(FileNotFoundError, match='give cl100k_base, words'):
        token_counter('no-such-tokenizer.json')
