"""Run from this folder once the example is installed (``pip install .``): ``pytest``."""

import json

from kv_retrieval_benchmark import json_data

from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.testing import check_benchmark


def test_the_asked_key_sits_at_the_declared_depths_among_random_pairs():
    records = named('kv_retrieval').synthetic_records('retrieval', '75', 5, seed=0)
    for record, depth in zip(records, (0.0, 0.25, 0.5, 0.75, 1.0)):
        pairs = json_data(record['context'])
        key = json.loads(record['input'].split('Key: ')[1].splitlines()[0])
        assert len(pairs) == 75 and pairs[key] == record['answer']
        assert list(pairs).index(key) == round(depth * 74) and record['depth'] == depth


def test_a_reply_scores_its_value_and_another_keys_value_as_a_wrong_key():
    kv = named('kv_retrieval')
    (record,) = kv.synthetic_records('retrieval', '75', 1, seed=1)
    other = next(v for v in json_data(record['context']).values() if v != record['answer'])
    assert kv.score_reply(f'"{record["answer"]}"', record) == {'accuracy': 100, 'wrong_key': 0}
    assert kv.score_reply(other, record) == {'accuracy': 0, 'wrong_key': 100}
    assert kv.score_reply('no idea', record) == {'accuracy': 0, 'wrong_key': 0}


def test_kv_retrieval_conforms(tmp_path):
    check_benchmark('kv_retrieval', tmp_path)
