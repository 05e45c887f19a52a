"""Seeded synthetic LongBench v2 records in the official ``data.json`` schema, for CPU demos.

Each record hides one fact ("The amber key was left in the boathouse.") among filler sentences
about the other rooms and asks where the key was left, with four rooms as choices, so a model (or
a retrieval baseline) has something real to find. Every difficulty and length class occurs; the
lengths are the official classes scaled down (short 400 words, medium 1,200, long 3,600 by
default), and ``retrieved_context`` holds the context's chunks ranked with the fact's chunk first,
as a working retriever would rank them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ..files.atomic import write_text
from ..framework.benchmarks import mark_synthetic
from .tasks import CHOICES, DIFFICULTIES, LENGTHS

DOMAINS = (
    'Single-Document QA',
    'Multi-Document QA',
    'Long In-context Learning',
    'Long-dialogue History Understanding',
    'Code Repository Understanding',
    'Long Structured Data Understanding',
)
WORDS_PER_LENGTH = {'short': 400, 'medium': 1200, 'long': 3600}
CHUNK_WORDS = 120
_COLOURS = ('amber', 'cobalt', 'crimson', 'ivory', 'jade', 'ochre', 'silver', 'violet')
_ROOMS = (
    'boathouse',
    'cellar',
    'chapel',
    'dovecote',
    'granary',
    'library',
    'orangery',
    'pantry',
    'stable',
    'tower',
    'workshop',
    'vestry',
)
_FILLER = (
    'The {room} had a low door of old oak and smelled of dust and rain.',
    'Nobody had swept the {room} since the steward left in the autumn.',
    'A lamp hung in the {room}, though it was seldom lit after dark.',
    'Children were told never to play in the {room} without leave.',
    'The way to the {room} led past the well and under the long arch.',
)


def _context(rng: random.Random, fact: str, words: int) -> tuple[str, range]:
    """Filler sentences about the rooms, about ``words`` words, the fact at a random place;
    with the word positions the fact occupies."""
    sentences, total = [], len(fact.split())
    while total < words:
        sentence = rng.choice(_FILLER).format(room=rng.choice(_ROOMS))
        sentences.append(sentence)
        total += len(sentence.split())
    place = rng.randint(0, len(sentences))
    start = sum(len(s.split()) for s in sentences[:place])
    sentences.insert(place, fact)
    return ' '.join(sentences), range(start, start + len(fact.split()))


def _chunks(context: str, fact_words: range, rng: random.Random) -> list[dict]:
    """The context in chunks of ``CHUNK_WORDS`` words: those holding the fact first, the rest
    shuffled (a retriever's ranking that works)."""
    words = context.split(' ')
    chunks = [
        {'c_idx': number, 'content': ' '.join(words[start : start + CHUNK_WORDS])}
        for number, start in enumerate(range(0, len(words), CHUNK_WORDS))
    ]
    holding = sorted({position // CHUNK_WORDS for position in fact_words})
    rest = [chunk for chunk in chunks if chunk['c_idx'] not in holding]
    rng.shuffle(rest)
    return [chunks[number] for number in holding] + rest


def synthetic_records(count: int = 12, seed: int = 0, scale: float = 1.0) -> list[dict]:
    """``count`` records cycling through every (difficulty, length) pair; lengths
    ``WORDS_PER_LENGTH`` times ``scale``."""
    rng = random.Random(f'longbench_v2:{seed}')
    classes = [(d, n) for n in LENGTHS for d in DIFFICULTIES]
    records = []
    for number in range(count):
        difficulty, length = classes[number % len(classes)]
        colour = _COLOURS[number % len(_COLOURS)]
        rooms = rng.sample(_ROOMS, 4)
        answer = rng.choice(CHOICES)
        room = rooms[CHOICES.index(answer)]
        fact = f'The {colour} key was left in the {room}.'
        context, fact_words = _context(rng, fact, int(WORDS_PER_LENGTH[length] * scale))
        records.append(
            {
                '_id': f'{rng.getrandbits(96):024x}',
                'domain': DOMAINS[number % len(DOMAINS)],
                'sub_domain': 'Synthetic',
                'difficulty': difficulty,
                'length': length,
                'question': f'Where was the {colour} key left?',
                **{f'choice_{letter}': f'In the {r}' for letter, r in zip(CHOICES, rooms)},
                'answer': answer,
                'context': context,
                'retrieved_context': _chunks(context, fact_words, rng),
            }
        )
    return records


def write_synthetic(out_dir: str | Path, count: int = 12, seed: int = 0) -> Path:
    """Write ``data.json`` (the official layout: one JSON array) and the synthetic mark."""
    out_dir = Path(out_dir)
    records = synthetic_records(count, seed)
    path = write_text(out_dir / 'data.json', json.dumps(records, ensure_ascii=False, indent=1))
    mark_synthetic(out_dir)
    return path
