"""Parity with the official MRCR code on the golden set in tests/data: every GDM ``mrcr_v2_metric``
case and every OpenAI ``grade`` case (value, type, and the error where the official raises),
both through the functions and through the scorer's files, and the MRCR v2 rows
``generate_mrcr_v2`` assembled from the golden texts and seed."""

import json

import pytest
from parity_data import DATA

from opencompass_lveval.mrcr.build import buckets_up_to, generate_mrcr_v2
from opencompass_lveval.mrcr.metrics import gdm_mrcr_v2_metric, openai_mrcr_grade
from opencompass_lveval.mrcr.prompts import v2_messages
from opencompass_lveval.mrcr.score import score_openai_file, score_v2_file

GOLDEN = DATA / 'golden' / 'mrcr'
GDM_CASES = GOLDEN / 'gdm_mrcr_v2_metric_cases.jsonl'
OPENAI_CASES = GOLDEN / 'openai_mrcr_grade_cases.jsonl'
TOKENIZER = DATA / 'reference' / 'tokenizers' / 'llama2_sp' / 'tokenizer.json'


def cases(path) -> list[dict]:
    return [json.loads(line) for line in path.open()]


def gdm_outcome(case: dict):
    got = gdm_mrcr_v2_metric(case['prediction'], case['target'])
    return got, type(got).__name__, None


def openai_outcome(case: dict):
    try:
        got = openai_mrcr_grade(case['response'], case['answer'], case['random_string_to_prepend'])
    except Exception as exc:
        return None, None, f'{type(exc).__name__}: {exc}'
    return got, type(got).__name__, None


@pytest.mark.parametrize(
    ('path', 'outcome', 'count', 'types'),
    [
        (GDM_CASES, gdm_outcome, 258, {'float': 258}),
        # OpenAI's missing prefix is the int 0; a None response raises
        (OPENAI_CASES, openai_outcome, 256, {'float': 147, 'int': 108, None: 1}),
    ],
    ids=['gdm_mrcr_v2_metric', 'openai_grade'],
)
def test_every_metric_case_value_type_and_error(path, outcome, count, types):
    found = cases(path)
    wrong = [
        c['id']
        for c in found
        if outcome(c)
        != (c['official_score'], c.get('official_type', 'float'), c.get('official_error'))
    ]
    assert (len(found), wrong) == (count, [])
    kinds = [c.get('official_type', 'float') for c in found]
    assert {kind: kinds.count(kind) for kind in set(kinds)} == types


def test_the_scorers_write_every_case_in_input_order(tmp_path):
    out = tmp_path / 'openai.jsonl'
    printed = score_openai_file(OPENAI_CASES, out)
    written = [json.loads(line) for line in out.open()]
    found = cases(OPENAI_CASES)
    assert [w['id'] for w in written] == [c['id'] for c in found]
    for w, c in zip(written, found):
        if 'official_error' in c:
            assert (w['score'], w['official_error']) == (0, c['official_error'])
        else:
            assert w['score'] == c['official_score']
            assert type(w['score']).__name__ == c['official_type']  # 0 stays an int in JSON
    assert '1 where the official grader raises' in printed[0]
    out = tmp_path / 'gdm.jsonl'
    score_v2_file(GDM_CASES, out)
    assert [json.loads(line)['score'] for line in out.open()] == [
        c['official_score'] for c in cases(GDM_CASES)
    ]


@pytest.fixture(scope='module')
def count_tokens():
    """The golden generator's tokenizer: realtok llama2_sp, encode without special tokens."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize(
    ('variant', 'needles', 'static_fewshot', 'json_style', 'rows'),
    [('text_dynamic_fewshot', 2, False, False, 10), ('json_static_fewshot', 4, True, True, 11)],
)
def test_assembled_rows_equal_generate_mrcr_v2s(
    count_tokens, variant, needles, static_fewshot, json_style, rows
):
    texts = json.loads((GOLDEN / 'task_source_texts.json').read_text('utf-8'))
    made = generate_mrcr_v2(
        texts,
        needles=needles,
        samples_per_bucket=5,
        buckets=buckets_up_to(8192),
        static_fewshot=static_fewshot,
        json_style=json_style,
        count_tokens=count_tokens,
        seed=1234,
        mode='official',
    )
    expected = cases(GOLDEN / f'tasks_{variant}.jsonl')
    assert len(made) == len(expected) == rows  # 5 asked: the limit only stops one group
    assert [gdm_mrcr_v2_metric(row['answer'], row['answer']) for row in made] == [
        row.pop('gdm_score_of_answer_itself') for row in expected
    ]
    assert json.loads(json.dumps(made)) == expected  # tuples as JSON lists
    messages = v2_messages(made[0]['queries'])
    if json_style:
        assert messages[-1]['content'] == json.loads(made[0]['view_ops'][:-1])['content']
        assert [m['role'] for m in messages[1:3]] == ['user', 'assistant']
    else:
        assert messages == [{'role': 'user', 'content': made[0]['queries']}]


def test_default_mode_stops_at_the_sample_limit(count_tokens):
    texts = json.loads((GOLDEN / 'task_source_texts.json').read_text('utf-8'))
    options = dict(
        needles=2,
        samples_per_bucket=5,
        buckets=[(4096, 8192)],
        static_fewshot=False,
        json_style=False,
        count_tokens=count_tokens,
        seed=1234,
    )
    made = generate_mrcr_v2(texts, **options)
    official = generate_mrcr_v2(texts, mode='official', **options)
    assert len(made) == 5 and made == official[:5]
