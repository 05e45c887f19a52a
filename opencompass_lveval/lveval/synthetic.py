"""Seeded synthetic LV-Eval data: every subset in the official file format, no download needed.

Each record asks about one fact ("Who founded the town of X?") hidden among passages of other,
similar facts, so a model (or the extractive baseline) has something real to find, and a score is
meaningful. Lengths follow the five levels divided by ``scale`` (words for English, characters for
Chinese), so the demo runs in seconds on a CPU while keeping the shape of the benchmark.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path

from ..framework.sizes import parse_size
from .build import write_jsonl
from .tasks import LEVELS, TASKS, Task

_EN_FIRST = (
    'Ada',
    'Bram',
    'Clara',
    'Dmitri',
    'Elena',
    'Farid',
    'Greta',
    'Hugo',
    'Ines',
    'Jonas',
    'Kira',
    'Lars',
    'Mira',
    'Nils',
    'Olga',
    'Pavel',
    'Rosa',
    'Stefan',
    'Tara',
    'Viktor',
)
_EN_LAST = (
    'Abbott',
    'Brenner',
    'Castell',
    'Dorsey',
    'Ellery',
    'Fairbank',
    'Garland',
    'Hale',
    'Ivers',
    'Jessop',
    'Kendrick',
    'Lowell',
    'Marsh',
    'Norwood',
    'Oakes',
    'Prescott',
)
_EN_PLACE = (
    'Ash',
    'Birch',
    'Cedar',
    'Elm',
    'Fern',
    'Glen',
    'Hazel',
    'Iron',
    'Juniper',
    'Kestrel',
    'Lark',
    'Maple',
    'North',
    'Oak',
    'Pine',
    'Quarry',
    'Raven',
    'Stone',
    'Thorn',
    'Willow',
)
_EN_SUFFIX = ('ford', 'bury', 'wick', 'dale', 'mouth', 'field', 'haven', 'ton')
_EN_FILLER = (
    'The road to {place} followed the river for many miles before it turned north.',
    'Travellers said that the market in {place} was busy on every day of the week.',
    'In winter the hills around {place} were covered with snow until late spring.',
    'The old bridge near {place} had been repaired twice by the local council.',
    'Farmers near {place} grew barley, oats and a little wheat on the lower fields.',
)
_ZH_SURNAME = '赵钱孙李周吴郑王冯陈褚卫蒋沈韩杨朱秦尤许何吕施张孔曹严华金魏陶姜'
_ZH_GIVEN = '明华强伟芳娜敏静丽军杰涛超勇艳娟霞平刚桂英兰'
_ZH_PLACE_HEAD = '青松石云白龙凤金银玉清河山湖海'
_ZH_PLACE_TAIL = ('镇', '村', '城', '县', '堡', '庄')
_ZH_FILLER = (
    '通往{place}的道路沿着河流延伸了很多里，然后转向北方。',
    '旅行的人们说{place}的集市每天都很热闹。',
    '冬天{place}周围的山上积雪一直到春末才融化。',
    '{place}附近的老桥曾经被当地官府修缮过两次。',
    '{place}附近的农民在低处的田地里种植大麦和小麦。',
)


def _fact(task: Task, rng: random.Random, used: set) -> dict:
    """A unique (place, founder, year) fact with its sentence, question and answer keywords."""
    while True:
        year = rng.randint(1100, 1899)
        if task.language == 'en':
            place = rng.choice(_EN_PLACE) + rng.choice(_EN_SUFFIX)
            founder = f'{rng.choice(_EN_FIRST)} {rng.choice(_EN_LAST)}'
        else:
            place = (
                rng.choice(_ZH_PLACE_HEAD) + rng.choice(_ZH_PLACE_HEAD) + rng.choice(_ZH_PLACE_TAIL)
            )
            founder = rng.choice(_ZH_SURNAME) + rng.choice(_ZH_GIVEN) + rng.choice(_ZH_GIVEN)
        if place not in used:
            used.add(place)
            break
    if task.language == 'en':
        sentence = f'The town of {place} was founded by {founder} in the year {year}.'
        question = f'Who founded the town of {place}?'
    else:
        sentence = f'{place}是由{founder}在{year}年建立的。'
        question = f'{place}是由谁建立的？'
    return dict(place=place, founder=founder, sentence=sentence, question=question)


def _passage(task: Task, fact: dict, rng: random.Random, size: int) -> str:
    """A passage of about ``size`` words/characters with the fact at a random sentence boundary."""
    fillers = _EN_FILLER if task.language == 'en' else _ZH_FILLER

    def measure(sentence: str) -> int:
        return len(sentence.split()) if task.language == 'en' else len(sentence)

    sentences, length = [], measure(fact['sentence'])
    while length < size:
        sentence = rng.choice(fillers).format(place=fact['place'])
        sentences.append(sentence)
        length += measure(sentence)
    sentences.insert(rng.randint(0, len(sentences)), fact['sentence'])
    return (' ' if task.language == 'en' else '').join(sentences)


def synthetic_records(task: Task, level: str, count: int, scale: int, seed: int) -> list[dict]:
    """``count`` records of one subset; the same questions at every level, as in LV-Eval."""
    rng = random.Random(f'{seed}:{task.name}')
    used: set = set()
    facts = [_fact(task, rng, used) for _ in range(count + 8)]
    target = parse_size(level) // scale
    level_rng = random.Random(f'{seed}:{task.name}:{level}')
    records = []
    for index, fact in enumerate(facts[:count]):
        distractors = [f for i, f in enumerate(facts) if i != index]
        # About 60 words per passage at the shortest levels, never more than 8 passages.
        documents = [fact] + level_rng.sample(distractors, k=min(7, max(1, target // 60 - 1)))
        level_rng.shuffle(documents)
        passage_size = target // len(documents)
        context = '\n'.join(
            f'Passage {i}\n{_passage(task, doc, level_rng, passage_size)}'
            for i, doc in enumerate(documents)
        )
        records.append(
            dict(
                input=fact['question'],
                context=context,
                answers=[fact['founder']],
                length=len(context.split()) if task.language == 'en' else len(context),
                dataset=task.name,
                language=task.language,
                answer_keywords=fact['founder'],
                confusing_facts=[],
                all_classes=None,
            )
        )
    return records


def write_synthetic(
    out_dir: str | Path,
    count: int = 4,
    scale: int = 100,
    seed: int = 0,
    levels: Iterable[str] = LEVELS,
) -> list[Path]:
    """Write ``{dataset}_{level}.jsonl`` for every dataset and level; return the paths."""
    return [
        write_jsonl(
            Path(out_dir) / f'{task.subset(level)}.jsonl',
            synthetic_records(task, level, count, scale, seed),
            count,
            task.subset(level),
        )
        for task in TASKS
        for level in levels
    ]
