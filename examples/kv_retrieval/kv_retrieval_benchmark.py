"""Key-value retrieval from "Lost in the Middle" (Liu et al., 2023) as an opencompass_lveval
benchmark: a JSON object of random UUID pairs, and the model is asked for one key's value. Levels
are the number of pairs; the key sits at declared depths. ``accuracy``: the reply holds the value;
``wrong_key``: it holds another key's value instead (read from the record's own JSON)."""

from __future__ import annotations

import json
import random
import uuid

from opencompass_lveval.framework.declared import DeclaredBenchmark

INSTRUCTION = 'Extract the value corresponding to the specified key in the JSON object below.'
QUESTION = 'Key: "{key}"\nCorresponding value:'
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)  # where the asked key sits among the pairs


def kv_record(pairs: int, depth: float, rng: random.Random) -> dict:
    """One JSON object of ``pairs`` random UUID pairs, asking for the key at ``depth``."""
    keys = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(2 * pairs)]
    data = dict(zip(keys[::2], keys[1::2]))
    key = keys[2 * round(depth * (pairs - 1))]
    body = ',\n '.join(f'{json.dumps(k)}: {json.dumps(v)}' for k, v in data.items())
    return {
        'context': f'{INSTRUCTION}\n\nJSON data:\n{{{body}}}',
        'input': QUESTION.format(key=key),
        'answer': data[key],
        'depth': depth,
    }


def json_data(text: str) -> dict:
    """The JSON object of a record's context (or of a prompt holding one); {} where none."""
    start, end = text.find('{'), text.rfind('}')
    try:
        return json.loads(text[start : end + 1]) if 0 <= start < end else {}
    except json.JSONDecodeError:
        return {}


class KVRetrieval(DeclaredBenchmark):
    name, title, prefix = 'kv_retrieval', 'KV retrieval', 'KV'
    tasks = ('retrieval',)
    sizes = ('75', '140', '300')
    level_unit = 'pairs'
    depth_bins = DEPTHS
    data_file = 'kv_{size}.jsonl'
    depth_field = 'depth'
    cut = None  # a cut JSON object is another task: the prompt is kept whole
    prompt = '{context}\n\n{input}'
    metrics = ('accuracy', 'wrong_key')
    headline_metric = 'accuracy'
    max_out_len = 48
    demo_count = 5
    depth_legend = 'for KV retrieval the position of the asked key among the pairs'

    def score_reply(self, reply: str, record: dict) -> dict:
        others = [v for v in json_data(record['context']).values() if v != record['answer']]
        return {
            'accuracy': 100.0 * (record['answer'] in reply),
            'wrong_key': 100.0 * any(value in reply for value in others),
        }

    def synthetic_records(self, task: str, size: str, count: int, seed: int) -> list[dict]:
        rng = random.Random(f'{seed}:kv_retrieval:{size}')
        return [kv_record(int(size), DEPTHS[i % len(DEPTHS)], rng) for i in range(count)]

    def random_answer(self, prompt: str, rng: random.Random):
        values = list(json_data(prompt).values()) if 'Corresponding value:' in prompt else []
        return rng.choice(values) if values else None
