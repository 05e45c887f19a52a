"""Passkey retrieval as an opencompass_lveval benchmark: a five-digit number hidden at one of ten
depths in repeated filler text; the model is asked for it. Exact match: the first number of the
reply is the key. Everything else (data check, OpenCompass dataset and evaluator, report tables
with intervals, plots, depth maps, leaderboard rows) comes from ``DeclaredBenchmark``."""

from __future__ import annotations

import random
import re
from pathlib import Path

from opencompass_lveval.benchmarks import BUILD_OUTPUT, BuildKind, argument
from opencompass_lveval.commands.arguments import COUNT, SIZES, argument_type
from opencompass_lveval.declared import DeclaredBenchmark
from opencompass_lveval.sizes import parse_size

INSTRUCTION = (
    'There is an important info hidden inside a lot of irrelevant text. Find it and memorize '
    'it. I will quiz you about the important information there.'
)
FILLER = 'The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.'
NEEDLE = 'The pass key is {key}. Remember it. {key} is the pass key.'
QUESTION = 'What is the pass key? The pass key is'
DEPTHS = tuple(round(0.05 + 0.1 * i, 2) for i in range(10))  # the middle of each tenth


def passkey_record(words: int, depth: float, rng: random.Random) -> dict:
    """One record of about ``words`` words with the needle after ``depth`` of the filler; its
    ``depth`` is where the key first occurs, as a fraction of the context."""
    key = str(rng.randrange(10_000, 100_000))
    repeats = max(1, round(words / len(FILLER.split())))
    before = round(depth * repeats)
    parts = [INSTRUCTION] + [FILLER] * before + [NEEDLE.format(key=key)]
    context = ' '.join(parts + [FILLER] * (repeats - before))
    return {
        'context': context,
        'input': QUESTION,
        'answer': key,
        'depth': context.index(key) / len(context),
    }


def passkey_records(size: str, count: int, seed: int, depths=DEPTHS) -> list[dict]:
    """``count`` records of ``size`` words, cycling through ``depths``; seeded per size."""
    rng = random.Random(f'{seed}:passkey:{size}')
    return [passkey_record(parse_size(size), depths[i % len(depths)], rng) for i in range(count)]


def _depths(text: str) -> tuple[float, ...]:
    """``0.1,0.5``: depths as fractions of the context, each in [0, 1]."""
    found = tuple(float(part) for part in text.split(','))
    if not all(0 <= depth <= 1 for depth in found):
        raise ValueError(f'depths are fractions of the context in [0, 1], not {text!r}')
    return found


class Passkey(DeclaredBenchmark):
    name, title, prefix = 'passkey', 'Passkey', 'Passkey'
    tasks = ('retrieval',)
    data_file = 'passkey_{size}.jsonl'
    sizes = ('2k', '4k')
    depth_field = 'depth'
    depth_bins = (
        10  # its depth maps' rows: the tenths of the context (its DEPTHS are their middles)
    )
    prompt = '{context}\n\n{input}'
    max_out_len = 16
    depth_legend = 'for Passkey the tenth of the context where the key first occurs'

    def score_record(self, prediction: str, answer) -> float:
        first = re.search(r'\d+', prediction)
        return 100.0 if first and first[0] == str(answer) else 0.0

    def synthetic_records(self, task: str, size: str, count: int, seed: int) -> list[dict]:
        return passkey_records(size, count, seed)

    def random_answer(self, prompt: str, rng: random.Random):
        return str(rng.randrange(10_000, 100_000)) if prompt.rstrip().endswith(QUESTION) else None

    def build_kinds(self) -> dict[str, BuildKind]:
        return {
            'passkey': BuildKind(
                'passkey files at any length (words) and depths',
                (
                    argument('--sizes', type=SIZES, default=list(self.sizes)),
                    argument('--depths', type=argument_type(_depths, 'depths'), default=DEPTHS),
                    argument('--count', type=COUNT, default=20, help='records per size'),
                    *BUILD_OUTPUT,
                ),
                self.build,
            )
        }

    def build(self, *, sizes, depths, count, out, seed) -> list[Path]:
        import json

        from opencompass_lveval.atomic import write_text

        paths = []
        for size in sizes:
            records = passkey_records(size, count, seed, depths)
            paths.append(self.data_path(out, 'retrieval', size))
            write_text(paths[-1], ''.join(json.dumps(r) + '\n' for r in records))
        return paths
