"""Builder inputs: every bad QA item, rule or BestAnswer question, given to ``lveval build`` as a
user would, exits 2 with one ``error:`` line naming the file, the line or item and the field, and
writes nothing. BestAnswer's tag index and streamed output give the bytes of the pair-by-pair
build."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

from opencompass_lveval.adaleval.build import (
    bestanswer_records,
    token_counter,
    write_task_file,
)
from opencompass_lveval.adaleval.tasks import BESTANSWER
from opencompass_lveval.cli import main

ITEM = {'input': 'Who?', 'answers': ['Ann'], 'documents': ['Ann was here.'], 'answer_keywords': ''}
QUESTION = {
    'question_id': 'q1',
    'question': 'How?',
    'all_answers': ['a', 'b'],
    'answer': 'A1',
    'tags': ['python'],
}
MIXUP = ['build', 'mixup', '--dataset', 'mine', '--language', 'en', '--levels', '16k']


def lveval(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def items_file(tmp: Path, text: str) -> list[str]:
    (tmp / 'items.jsonl').write_text(json.dumps(ITEM) + '\n' + text + '\n', 'utf-8')
    return [*MIXUP, '--items', tmp / 'items.jsonl']


def rules_file(tmp: Path, text: str) -> list[str]:
    (tmp / 'rules.json').write_text(text, 'utf-8')
    return [*items_file(tmp, json.dumps(ITEM)), '--rules', tmp / 'rules.json']


def source_file(tmp: Path, text: str) -> list[str]:
    (tmp / 'source.json').write_text(f'[{json.dumps(QUESTION)}, {text}]', 'utf-8')
    return ['build', 'bestanswer', '--source', tmp / 'source.json', '--setting', '4k']


def item(**changes) -> str:
    return json.dumps({**ITEM, **changes})


def question(drop=(), **changes) -> str:
    return json.dumps({k: v for k, v in {**QUESTION, **changes}.items() if k not in drop})


BAD = {
    'documents-string': (
        items_file,
        item(documents='Ann was here.'),
        'items.jsonl, line 2: "documents" must be a list of strings',
    ),
    'answers-string': (
        items_file,
        item(answers='Ann'),
        'line 2: "answers" must be a non-empty list of strings',
    ),
    'keywords-list': (
        items_file,
        item(answer_keywords=['Ann']),
        'line 2: "answer_keywords" must be a string',
    ),
    'facts-string': (
        items_file,
        item(confusing_facts='x'),
        'line 2: "confusing_facts" must be a list of strings',
    ),
    'input-missing': (
        items_file,
        json.dumps({'answers': ['a'], 'documents': []}),
        'line 2: a QA item needs "input"',
    ),
    'item-nan': (
        items_file,
        '{"input": "q", "answers": ["a"], "documents": [], "score": NaN}',
        'line 2: "score" holds NaN',
    ),
    'item-nan-in-answers': (
        items_file,
        '{"input": "q", "answers": [NaN], "documents": []}',
        'line 2: "answers" must be a non-empty list of strings, found [NaN',
    ),
    'item-not-json': (items_file, '{"input": ', 'line 2: not valid JSON'),
    'rule-empty-original': (
        rules_file,
        '{"": "X"}',
        "rules.json, key '': the original must be a non-empty string",
    ),
    'rule-number-substitute': (
        rules_file,
        '{"the": 1}',
        "rules.json, key 'the': the substitute of 'the' must be a string, found 1",
    ),
    'rule-not-a-pair': (
        rules_file,
        '[["a", "b"], ["c"]]',
        'rules.json, item 1: a rule is an [original, substitute] pair',
    ),
    'rule-nan': (rules_file, '{"the": NaN}', "the substitute of 'the' must be a string, found NaN"),
    'gold-a0': (
        source_file,
        question(answer='A0'),
        "source.json, item 1: \"answer\" must be the accepted answer's designation, A1..A2, found 'A0'",
    ),
    'gold-a99': (
        source_file,
        question(answer='A99'),
        "item 1: \"answer\" must be the accepted answer's designation, A1..A2, found 'A99'",
    ),
    'tags-missing': (source_file, question(drop=('tags',)), "item 1: no 'tags'"),
    'answers-missing': (source_file, question(drop=('all_answers',)), "item 1: no 'all_answers'"),
    'answers-not-strings': (
        source_file,
        question(all_answers=['a', 2]),
        'item 1: "all_answers" must be a list of 1 to 10000 strings',
    ),
    'answers-a-string': (
        source_file,
        question(all_answers='ab'),
        'item 1: "all_answers" must be a list',
    ),
    'tags-a-string': (
        source_file,
        question(tags='python'),
        'item 1: "tags" must be a list of strings',
    ),
    'question-nan': (
        source_file,
        question(question_id=1)[:-1] + ', "votes": NaN}',
        'item 1: "votes" holds NaN',
    ),
}


@pytest.mark.parametrize('case', sorted(BAD))
def test_bad_builder_input_is_one_error_line_and_writes_nothing(case, tmp_path):
    make, text, expected = BAD[case]
    out = tmp_path / 'out'
    code, stdout, stderr = lveval(*make(tmp_path, text), '--out', out)
    assert code == 2, (stdout, stderr)
    assert stderr.startswith('error: ') and stderr.count('\n') == 1, stderr
    assert expected in stderr, stderr
    assert not out.exists()


def pairwise_bestanswer(questions, budget, counter, seed=0, min_tag_share=None) -> list[dict]:
    """The build without the tag index: every pair's tag share computed, every near question
    walked (no stop when the room left is too small for any answer)."""
    sizes = [[counter.count(a) for a in q['all_answers']] for q in questions]
    records = []
    for index, question in enumerate(questions):
        key = f'{seed}:bestanswer:{budget}:{question["question_id"]}'
        rng, walk = random.Random(key), random.Random(f'{key}:order')
        accepted_index = int(question['answer'][1:]) - 1
        accepted = question['all_answers'][accepted_index]
        share = min_tag_share if min_tag_share is not None else (0.4 if budget <= 16_000 else 1e-9)
        candidates = [accepted] + [
            a for i, a in enumerate(question['all_answers']) if i != accepted_index
        ]
        used = counter.count(question['question']) + sum(sizes[index])
        own = set(question['tags'])
        others = [
            j
            for j in range(len(questions))
            if j != index and len(own & set(questions[j]['tags'])) / max(1, len(own)) >= share
        ]
        walk.shuffle(others)  # the near questions in a seeded order, read from the end
        for j in reversed(others):
            for answer, size in zip(questions[j]['all_answers'], sizes[j]):
                if used + size <= budget:
                    candidates.append(answer)
                    used += size
        kept = candidates[1:]
        rng.shuffle(kept)
        position = rng.randrange(len(kept) + 1)
        kept.insert(position, accepted)
        records.append(
            dict(
                question_id=question['question_id'],
                question=question['question'],
                all_answers=kept,
                answer=f'A{position + 1}',
                tags=question['tags'],
            )
        )
    return records


@pytest.mark.parametrize('budget, share', [(300, None), (30_000, None), (300, 0.0), (300, 0.7)])
def test_tag_index_gives_the_pairwise_records_and_the_same_bytes(tmp_path, budget, share):
    rng = random.Random(5)
    tags = ['python', 'c', 'go', 'rust', 'sql', 'css', 'bash']
    questions = [
        dict(
            question_id=f'q{i}',
            question=f'question {i} ' * rng.randint(1, 9),
            all_answers=[f'answer {i}.{k} ' * rng.randint(1, 30) for k in range(rng.randint(1, 4))],
            answer='A1',
            tags=rng.sample(tags, rng.randint(0, 3)),
        )
        for i in range(120)
    ]
    counter = token_counter('words')
    expected = pairwise_bestanswer(questions, budget, counter, 3, share)
    assert bestanswer_records(questions, budget, counter, 3, share) == expected
    path = write_task_file(BESTANSWER, '4k', iter(expected), tmp_path)
    assert path.read_text('utf-8') == json.dumps(expected, ensure_ascii=False)
    assert write_task_file(BESTANSWER, '4k', [], tmp_path).read_text('utf-8') == '[]'
