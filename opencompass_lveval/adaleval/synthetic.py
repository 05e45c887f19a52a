"""Seeded synthetic Ada-LEval files in the official formats, for demos and tests (no download).

BestAnswer: a question about a made-up function and several candidate answers, one of them the
accepted one, growing with the token budget like the official settings. TSort: a made-up
chronicle cut into before / four shuffled parts / after, with the official instruction.
Sizes use a words ~ 0.75 x tokens rule of thumb; the data has the official shape, not its text.
"""

from __future__ import annotations

import random

from ..framework.sizes import parse_size
from .prompts import tsort_prompt

_VERBS = ('parse', 'merge', 'sort', 'cache', 'stream', 'validate', 'compress', 'schedule')
_THINGS = (
    'log files',
    'JSON records',
    'user sessions',
    'image tiles',
    'sensor readings',
    'database rows',
    'network packets',
    'config entries',
)
_ADVICE = (
    'Use a generator so that {thing} never sit in memory all at once.',
    'Wrap the call in a context manager to close {thing} reliably.',
    'Sort {thing} first; the rest of the work becomes a single pass.',
    'Profile before optimising: most time with {thing} goes to I/O.',
    'Keep {thing} in a dictionary keyed by id to avoid quadratic lookups.',
    'Batch {thing} in groups of a thousand to cut the overhead per call.',
)
_EVENTS = (
    'the harvest failed',
    'a new bridge was built',
    'the river flooded the lower town',
    'merchants arrived from the south',
    'the old mill burned down',
    'a school opened near the square',
    'the council elected a new mayor',
    'snow closed the mountain pass',
)


def _words(setting: str) -> int:
    return parse_size(setting) * 3 // 4


def bestanswer_synthetic_records(setting: str, count: int, seed: int = 0) -> list[dict]:
    """``count`` questions; the same questions at every setting, more candidates when longer."""
    rng = random.Random(f'{seed}:bestanswer')
    questions = [(rng.choice(_VERBS), rng.choice(_THINGS), 1000 + i) for i in range(count)]
    records = []
    for verb, thing, number in questions:
        local = random.Random(f'{seed}:{number}:{setting}')
        answers, words = [], 0
        while words < _words(setting) - 60 or len(answers) < 2:
            answer = ' '.join(local.choice(_ADVICE).format(thing=thing) for _ in range(6))
            answers.append(answer)
            words += len(answer.split())
        accepted = local.randrange(len(answers))
        answers[accepted] = f'To {verb} {thing} efficiently: ' + answers[accepted]
        records.append(
            dict(
                question_id=str(number),
                question=f'How can I {verb} {thing} efficiently in Python?',
                all_answers=answers,
                answer=f'A{accepted + 1}',
                tags=['python', verb],
            )
        )
    return records


def _chronicle(year: int, words: int, rng: random.Random) -> str:
    """A paragraph of about ``words`` words of events, all in one year."""
    sentences, count = [], 0
    while count < words:
        sentence = f'In the year {year} {rng.choice(_EVENTS)}.'
        sentences.append(sentence)
        count += len(sentence.split())
    return ' '.join(sentences)


def tsort_synthetic_records(setting: str, count: int, seed: int = 0) -> list[dict]:
    """``count`` cases: before, four shuffled parts and after, from a made-up chronicle."""
    rng = random.Random(f'{seed}:tsort:{setting}')
    part_words = _words(setting) // 6
    records = []
    for book in range(count):
        first_year = 1200 + book * 40
        before, *ordered, after = [_chronicle(first_year + i, part_words, rng) for i in range(6)]
        shown = list(range(4))
        rng.shuffle(shown)
        parts = [ordered[i] for i in shown]
        answer = [shown.index(i) + 1 for i in range(4)]  # which part comes first, second...
        records.append(
            dict(
                book_id=book,
                para_offset=[1, 2, 3, 4],
                answer=answer,
                prompt=tsort_prompt(before, parts, after),
            )
        )
    return records
