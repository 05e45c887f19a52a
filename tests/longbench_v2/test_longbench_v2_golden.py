"""Parity with LongBench v2's official pred.py and result.py on the golden set in tests/data: every
request body (fast: 182, the calls without a document and all calls of the short records, with
``tokenizers``; slow: all 314 with the transformers tokenizer, pred.py's own path), every result
file, result.py's table, the 113 extraction cases."""

import json
import os
import shutil
from pathlib import Path

import pytest
from parity_data import DATA

from opencompass_lveval.longbench_v2 import requests, results, tasks
from opencompass_lveval.longbench_v2.extraction import extract_answer
from opencompass_lveval.longbench_v2.metrics import row_cells, row_name, table_text
from opencompass_lveval.longbench_v2.score import score_and_write

GOLDEN = DATA / 'golden' / 'longbench_v2'
TOKENIZER = DATA / 'reference' / 'tokenizers' / 'llama2_sp'
MODELS = {'llama2_sp-2k': 2000, 'llama2_sp-8k': 8000}  # the golden config's model2maxlen
SERVED = 'realtok/llama2_sp'  # their model2path value: the requests' "model"
RAG_CHUNKS = 8
# Records short enough to rebuild every call of in the fast loop (the two boundary records of
# runs.json among them: 2000 and 2001 ids at the 2k budget).
SHORT_CONTEXT = 10_000


@pytest.fixture(scope='module')
def records() -> dict:
    return {record['_id']: record for record in json.loads((GOLDEN / 'data.json').read_text())}


@pytest.fixture(scope='module')
def replies() -> dict:
    found = json.loads((GOLDEN / 'responses.json').read_text())['records']
    return {record['_id']: record['responses'] for record in found}


@pytest.fixture(scope='module')
def golden_requests() -> dict:
    return {
        model: [json.loads(line) for line in (GOLDEN / f'requests_{model}.jsonl').open()]
        for model in MODELS
    }


def rebuilt(request: dict, record: dict, reply: dict, model: str, codec) -> dict:
    """The body this package builds for one golden request, in official mode."""
    options = dict(model=SERVED, budget=MODELS[model], codec=codec, mode='official')
    if request['kind'] == tasks.ANSWER_CALL:
        return requests.answer_request(record, tasks.CHAIN_OF_THOUGHT, reply['cot'], **options)
    setting = tasks.setting_named(request['kind'])
    return requests.first_request(record, setting, rag=RAG_CHUNKS, **options)


def mismatched_bodies(golden_requests, records, replies, codec, keep) -> tuple[int, list]:
    checked, wrong = 0, []
    for model, sent in golden_requests.items():
        for request in sent:
            record = records[request['_id']]
            if not keep(request, record):
                continue
            checked += 1
            body = rebuilt(request, record, replies[request['_id']], model, codec)
            # equal as JSON objects and byte for byte as the client serialised them (key order)
            if body != request['body'] or json.dumps(body) != json.dumps(request['body']):
                wrong.append((model, request['seq'], request['kind'], request['_id']))
    return checked, wrong


def test_request_bodies_without_long_documents_equal_the_golden_ones(
    golden_requests, records, replies
):
    from tokenizers import Tokenizer

    codec = requests.codec_of(Tokenizer.from_file(str(TOKENIZER / 'tokenizer.json')))

    def keep(request, record):
        return (
            request['kind'] in ('no_context', 'cot_ans') or len(record['context']) < SHORT_CONTEXT
        )

    checked, wrong = mismatched_bodies(golden_requests, records, replies, codec, keep)
    assert (checked, wrong) == (182, [])


@pytest.mark.slow
def test_every_request_body_equals_the_golden_one_with_the_transformers_tokenizer(
    golden_requests, records, replies
):
    """All 314 bodies, the real Hugging Face path of pred.py (AutoTokenizer, encode, decode with
    special tokens skipped)."""
    from transformers import AutoTokenizer

    codec = requests.codec_of(AutoTokenizer.from_pretrained(str(TOKENIZER)))
    checked, wrong = mismatched_bodies(
        golden_requests, records, replies, codec, lambda request, record: True
    )
    assert (checked, wrong) == (314, [])


def test_the_golden_requests_are_what_the_settings_say(golden_requests):
    """Every call: one user message, temperature 0.1, 1024 new tokens for the first CoT call
    and 128 for the rest, the served model's name; 29 answer calls (3 empty first replies)."""
    for sent in golden_requests.values():
        kinds = [request['kind'] for request in sent]
        assert {kind: kinds.count(kind) for kind in set(kinds)} == {
            '0shot': 32,
            'cot': 32,
            'cot_ans': 29,
            'no_context': 32,
            'rag': 32,
        }
        for request in sent:
            body = request['body']
            setting = tasks.SETTINGS_BY_NAME.get(request['kind'])
            want = setting.first_max_tokens if setting else tasks.ANSWER_MAX_TOKENS
            assert (body['max_tokens'], body['temperature'], body['model']) == (want, 0.1, SERVED)
            assert [m['role'] for m in body['messages']] == ['user']


def golden_replies(reply: dict, setting) -> list[str]:
    if setting.calls == 1:
        return [reply[setting.name]]
    return [reply['cot']] + ([reply['cot_ans']] if reply['cot'] != '' else [])


@pytest.mark.parametrize('model', sorted(MODELS))
@pytest.mark.parametrize('setting', tasks.SETTINGS, ids=lambda setting: setting.name)
def test_result_files_equal_what_pred_py_wrote(model, setting, records, replies):
    """The file pred.py wrote for the setting, byte for byte: the dropped records, the cut
    context, the keys in order, ``response_cot``, ``pred`` and ``judge``."""
    lines = [
        results.result_line(record, setting, golden_replies(replies[name], setting), 'official', 8)
        for name, record in records.items()
    ]
    written = ''.join(results.dumps(line) + '\n' for line in lines if line is not None)
    expected = (GOLDEN / 'results' / setting.result_file(model, RAG_CHUNKS)).read_text('utf-8')
    assert written == expected


def test_every_stored_judgement_is_the_reply_read_again():
    for path in sorted((GOLDEN / 'results').iterdir()):
        for line in map(json.loads, path.open()):
            assert line['pred'] == extract_answer(line['response'])
            assert line['judge'] == (line['pred'] == line['answer'])


def test_extraction_matches_all_113_official_cases():
    cases = [json.loads(line) for line in (GOLDEN / 'extract_cases.jsonl').open()]
    assert len(cases) == 113
    assert [extract_answer(c['response']) for c in cases] == [
        c['official_extracted'] for c in cases
    ]


def golden_table_order() -> list[str]:
    """The row names of result.txt in its order (what os.listdir gave where it ran)."""
    return [line.split('\t')[0] for line in (GOLDEN / 'result.txt').read_text().split('\n')[1:]]


def test_the_table_equals_result_py_byte_for_byte_in_its_row_order():
    rows = []
    for name in golden_table_order():
        lines = [json.loads(line) for line in (GOLDEN / 'results' / f'{name}.jsonl').open()]
        rows.append((row_name(f'{name}.jsonl'), row_cells(lines)))
    assert table_text(rows) == (GOLDEN / 'result.txt').read_text('utf-8')


@pytest.fixture()
def results_copy(tmp_path) -> Path:
    folder = tmp_path / 'results'
    shutil.copytree(GOLDEN / 'results', folder)
    return folder


def test_scoring_the_folder_writes_result_txt_beside_it(results_copy):
    """Official mode: os.listdir's order, the rows byte for byte; default mode: sorted rows,
    the same rows, everywhere the same."""
    golden = (GOLDEN / 'result.txt').read_text('utf-8').split('\n')
    printed = score_and_write(results_copy, mode='official')
    written = (results_copy.parent / 'result.txt').read_text('utf-8').split('\n')
    listed = [row_name(name) for name in os.listdir(results_copy)]
    assert [line.split('\t')[0] for line in written[1:]] == listed
    assert written[0] == golden[0] and sorted(written[1:]) == sorted(golden[1:])
    assert printed[: len(written)] == written
    score_and_write(results_copy)
    assert (results_copy.parent / 'result.txt').read_text('utf-8').split('\n') == [
        golden[0],
        *sorted(golden[1:]),
    ]
