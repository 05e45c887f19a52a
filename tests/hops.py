"""A declared benchmark with two second factors and levels in the model's own tokens, for the
tests of both: variable tracking in the manner of RULER's vt (a value passed along a chain of
``hops`` assignments hidden in filler) beside a plain key lookup. ``kind`` is a property of the
task (tracking or retrieval), ``hops`` of each record (its field ``hops``, in the two tracking
tasks only). Two metrics: ``accuracy`` (the reply holds the value) and ``exact`` (the reply is
the value)."""

from __future__ import annotations

import random

from opencompass_lveval.framework.declared import DeclaredBenchmark
from opencompass_lveval.framework.factors import Factor

FILLER = 'The grass is green. The sky is blue.'
QUESTION = 'Which value does VAR {name} hold? Answer:'
HOPS = ('1', '2', '4')


def tracking_record(hops: int, words: int, rng: random.Random) -> dict:
    """A value assigned to one variable and passed along ``hops`` - 1 more, in filler."""
    value = str(rng.randrange(10_000, 100_000))
    names = [f'X{rng.randrange(10**6):06d}' for _ in range(hops)]
    links = [f'VAR {names[0]} = {value}.'] + [
        f'VAR {later} = VAR {earlier}.' for earlier, later in zip(names, names[1:])
    ]
    filler = [FILLER] * max(1, words // (7 * (hops + 1)))
    parts = [piece for link in links for piece in (*filler, link)] + filler
    return {
        'context': ' '.join(parts),
        'input': QUESTION.format(name=names[-1]),
        'answer': value,
        'hops': hops,
    }


def lookup_record(words: int, rng: random.Random) -> dict:
    value, name = str(rng.randrange(10_000, 100_000)), f'K{rng.randrange(10**6):06d}'
    filler = ' '.join([FILLER] * max(1, words // 14))
    context = f'{filler} VAR {name} = {value}. {filler}'
    return {'context': context, 'input': QUESTION.format(name=name), 'answer': value}


class Hops(DeclaredBenchmark):
    name, title, prefix = 'hops', 'Hops', 'Hops'
    tasks = ('chain', 'tree', 'lookup')
    sizes = ('1k', '2k', '8k')
    level_unit = 'tokens'
    level_tokens = {'1k': 1024, '2k': 2048, '8k': 8192}
    data_file = 'hops_{task}_{size}.jsonl'
    headline_metric = 'accuracy'
    metrics = ('accuracy', 'exact')
    factors = (
        Factor(
            'kind',
            'kind',
            'kinds',
            of_task={'chain': 'tracking', 'tree': 'tracking', 'lookup': 'retrieval'},
        ),
        Factor(
            'hops', 'hop count', 'hop counts', HOPS, record_field='hops', tasks=('chain', 'tree')
        ),
    )
    demo_count = 6
    max_out_len = 8

    def score_reply(self, reply: str, record: dict) -> dict:
        return {
            'accuracy': 100.0 * (record['answer'] in reply),
            'exact': 100.0 * (reply.strip() == record['answer']),
        }

    def synthetic_records(self, task: str, size: str, count: int, seed: int) -> list[dict]:
        rng = random.Random(f'{seed}:{task}:{size}')
        words = self.level_tokens[size] // 20
        if task == 'lookup':
            return [lookup_record(words, rng) for _ in range(count)]
        return [tracking_record(int(HOPS[i % 3]), words, rng) for i in range(count)]

    def random_answer(self, prompt: str, rng: random.Random):
        return str(rng.randrange(10_000, 100_000)) if 'Which value does VAR' in prompt else None


def cell_dataset(benchmark, task: str, size: str, folder):
    """One cell's OpenCompass dataset, made from the benchmark's own config of it."""
    from opencompass_lveval.framework.declared_opencompass import DeclaredDataset

    config = benchmark.cell_config(task, size, str(folder))
    return DeclaredDataset(
        **{
            key: value
            for key, value in config.items()
            if key not in ('type', 'infer_cfg', 'eval_cfg')
        }
    )
