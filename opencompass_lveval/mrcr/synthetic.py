"""Seeded synthetic MRCR data in both official formats, for CPU demos.

Writing pieces are sentences drawn from a small vocabulary, each piece distinct, so asking for
"the second poem about lanterns" has one right answer that a model must find among look-alikes:

- OpenAI MRCR: rows as in openai/mrcr (``prompt`` a JSON array of messages, ``answer`` the
  10-character random string then the needle, ``random_string_to_prepend``, ``n_needles``,
  ``desired_msg_index``, ``total_messages``, ``n_chars``), written to
  ``{n}needle/{n}needle_0.parquet``.
- MRCR v2: relevant, irrelevant and few-shot text tables made here, assembled by this package's
  ``generate_mrcr_v2`` (word counts for tokens) into download.sh's CSV files.

Lengths are in words and small by default; the files read back through ``data.py``.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from ..framework.benchmarks import mark_synthetic
from .build import buckets_up_to, generate_mrcr_v2
from .data import write_v2_csv
from .tasks import NEEDLES, v2_file_name

FORMATS = ('poem', 'riddle', 'short story', 'email', 'essay', 'tweet')
RELEVANT_TOPICS = ('lanterns', 'tide pools', 'glass bottles', 'old maps')
FILLER_TOPICS = ('clock towers', 'salt marshes', 'kites', 'copper kettles', 'ferries')
FEWSHOT_TOPICS = ('beehives', 'lighthouses')
STYLES = ('formal', 'humorous', 'archaic')
FEWSHOT_STYLES = ('gothic', 'regal')
_NOUNS = [
    'harbour',
    'lantern',
    'river',
    'window',
    'garden',
    'letter',
    'bridge',
    'candle',
    'meadow',
    'orchard',
    'compass',
    'ribbon',
    'kettle',
    'feather',
    'pebble',
    'shutter',
    'violin',
    'ladder',
    'saddle',
    'anchor',
]
_VERBS = [
    'waits',
    'glows',
    'drifts',
    'turns',
    'hums',
    'settles',
    'wanders',
    'gathers',
    'listens',
    'shines',
]
_ADJECTIVES = [
    'quiet',
    'amber',
    'distant',
    'narrow',
    'gentle',
    'hollow',
    'bright',
    'weathered',
    'silver',
    'patient',
]
_ORDINALS = ('1st', '2nd', '3rd', '4th', '5th', '6th', '7th', '8th')


def piece(rng: random.Random, words: int) -> str:
    """A writing piece of about ``words`` words, sentences of the vocabulary."""
    sentences = []
    while sum(len(s.split()) for s in sentences) < words:
        adjective, noun, verb = rng.choice(_ADJECTIVES), rng.choice(_NOUNS), rng.choice(_VERBS)
        sentences.append(f'The {adjective} {noun} {verb} by the {rng.choice(_NOUNS)}.')
    return ' '.join(sentences)


def text_table(rng, topics, styles, seeds: int, words: tuple[int, int]) -> dict:
    """format -> topic -> style -> seedN -> piece, the source-texts layout of MRCR v2."""
    return {
        fmt: {
            topic: {
                style: {f'seed{n}': piece(rng, rng.randint(*words)) for n in range(1, seeds + 1)}
                for style in styles
            }
            for topic in topics
        }
        for fmt in FORMATS[:3]
    }


def openai_record(rng: random.Random, needles: int, turns: int, words: int) -> dict:
    """One OpenAI MRCR sample: ``turns`` requests, ``needles`` of them the same, the final
    question asking for one of those by its position (1 indexed)."""
    fmt, topic = rng.choice(FORMATS), rng.choice(RELEVANT_TOPICS)
    asks = [(fmt, topic)] * needles + [
        (rng.choice(FORMATS), rng.choice(FILLER_TOPICS)) for _ in range(turns - needles)
    ]
    rng.shuffle(asks)
    messages, needle_turns = [], []
    for ask in asks:
        messages.append({'role': 'user', 'content': f'Write a {ask[0]} about {ask[1]}'})
        if ask == (fmt, topic):
            needle_turns.append(len(messages))
        messages.append({'role': 'assistant', 'content': piece(rng, words)})
    wanted = rng.randrange(needles)
    prefix = ''.join(rng.choice(string.ascii_letters + string.digits) for _ in range(10))
    messages.append(
        {
            'role': 'user',
            'content': f'Prepend {prefix} to the {_ORDINALS[wanted]} (1 indexed) {fmt} about '
            f'{topic}. Do not include any other text in your response.',
        }
    )
    return {
        'prompt': json.dumps(messages),
        'answer': prefix + messages[needle_turns[wanted]]['content'],
        'random_string_to_prepend': prefix,
        'n_needles': needles,
        'desired_msg_index': needle_turns[wanted],
        'total_messages': len(messages),
        'n_chars': sum(len(m['content']) for m in messages),
    }


def write_openai_synthetic(out_dir: str | Path, count: int = 4, seed: int = 0) -> list[Path]:
    """``{n}needle/{n}needle_0.parquet`` for 2, 4 and 8 needles, ``count`` rows each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(f'mrcr:openai:{seed}')
    paths = []
    for needles in NEEDLES:
        rows = [openai_record(rng, needles, 2 * needles + 6, 60) for _ in range(count)]
        path = Path(out_dir) / f'{needles}needle' / f'{needles}needle_0.parquet'
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f'.{path.name}.part')
        pq.write_table(pa.Table.from_pylist(rows), temporary)
        temporary.replace(path)
        paths.append(path)
    mark_synthetic(Path(out_dir))
    return paths


def v2_texts(seed: int = 0) -> dict:
    """Relevant, irrelevant and few-shot tables sized so a drawn few-shot prefix falls in the
    official 750-800 token window (words here)."""
    rng = random.Random(f'mrcr:v2:{seed}')
    return {
        'relevant': text_table(rng, RELEVANT_TOPICS, STYLES, 8, (80, 160)),
        'irrelevant': text_table(rng, FILLER_TOPICS, STYLES, 8, (80, 160)),
        'fewshot': text_table(rng, FEWSHOT_TOPICS, FEWSHOT_STYLES, 3, (108, 122)),
    }


def write_v2_synthetic(
    out_dir: str | Path, count: int = 3, seed: int = 0, max_context: int = 8192
) -> list[Path]:
    """download.sh's files for 2, 4 and 8 needles and every bucket up to ``max_context`` words,
    ``count`` rows per bucket."""
    texts, paths = v2_texts(seed), []
    for needles in NEEDLES:
        for low, high in sorted(buckets_up_to(max_context)):
            rows = generate_mrcr_v2(
                texts,
                needles=needles,
                samples_per_bucket=count,
                buckets=[(low, high)],
                static_fewshot=False,
                json_style=False,
                count_tokens=lambda text: len(text.split()),
                seed=seed,
            )
            name = v2_file_name(needles, f'in_({low},{high})')
            paths.append(write_v2_csv(rows, Path(out_dir) / name))
    mark_synthetic(Path(out_dir))
    return paths
