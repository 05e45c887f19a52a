"""The golden set's records and canned replies, shared by LongBench v2's tests."""

import json

import pytest
from parity_data import DATA

GOLDEN = DATA / 'golden' / 'longbench_v2'


@pytest.fixture(scope='module')
def records() -> dict:
    """``_id`` -> the record of the golden data.json."""
    return {record['_id']: record for record in json.loads((GOLDEN / 'data.json').read_text())}


@pytest.fixture(scope='module')
def replies() -> dict:
    """``_id`` -> the canned reply of each call kind (responses.json)."""
    found = json.loads((GOLDEN / 'responses.json').read_text())['records']
    return {record['_id']: record['responses'] for record in found}
