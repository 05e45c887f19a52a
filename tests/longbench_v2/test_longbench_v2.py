"""LongBench v2 on literal strings: the templates, both ways of filling them, the cut's arithmetic,
extraction, result lines in both modes, the table's cells, the loader and the scorer's errors."""

import hashlib
import json

import pytest

from opencompass_lveval.files import json_stream
from opencompass_lveval.files.errors import LongBenchV2DataError
from opencompass_lveval.longbench_v2 import prompts, requests, results, tasks
from opencompass_lveval.longbench_v2.data import SCORING_FIELDS, iter_records, load_records
from opencompass_lveval.longbench_v2.extraction import extract_answer
from opencompass_lveval.longbench_v2.metrics import accuracy_cell, row_cells, table_text
from opencompass_lveval.longbench_v2.score import score_and_write

# sha256 of prompts/*.txt in THUDM/LongBench at 2e00731f8d0bff23dc4325161044d0ed8af94c1e.
OFFICIAL_TEMPLATE_SHA256 = {
    'ZERO_SHOT': '68a162252bc9ff71d5d7abca3d69bb31aac3c35f832d657a2866f2018b8a6950',
    'COT': '6cc33d92fd8f611662b756c1f10f302c541ca005b58c46d5f3188ac3a939bfe8',
    'COT_ANSWER': '85ec59df4ac0e27aabbc619a7ca5cf3ae1787dd5a76cf51a18944eb52c91955f',
    'NO_CONTEXT': '125fb44183af01ffc623df19392b80a287db62af3e2a2805e5b2ff9c7b2bee30',
    'RAG': '5c50ce4fa24d297b8c72eb048599681ee01ced5d24a6636464386d6d3c72c4c9',
}


def record(**changes) -> dict:
    base = {
        '_id': 'r1',
        'domain': 'Single-Document QA',
        'sub_domain': 'Novel',
        'difficulty': 'easy',
        'length': 'short',
        'question': ' Which? ',
        'choice_A': 'one',
        'choice_B': 'two',
        'choice_C': 'three',
        'choice_D': 'four',
        'answer': 'B',
        'context': '\n The text. \n',
    }
    return {**base, **changes}


def test_templates_are_the_official_files_byte_for_byte():
    for name, digest in OFFICIAL_TEMPLATE_SHA256.items():
        assert hashlib.sha256(getattr(prompts, name).encode()).hexdigest() == digest, name
    assert prompts.COT.endswith('Let’s think step by step:')  # curly apostrophe, no newline


def test_official_fill_replaces_in_turn_and_default_fills_once():
    quirky = record(context='See $Q$ and $C_B$.', question='Is it $C_A$ or $DOC$?')
    values = prompts.fields(quirky, quirky['context'])
    official = prompts.fill('<$DOC$|$Q$>', values, 'official')
    assert official == '<See Is it one or $DOC$? and two.|Is it one or $DOC$?>'
    assert prompts.fill('<$DOC$|$Q$>', values) == '<See $Q$ and $C_B$.|Is it $C_A$ or $DOC$?>'
    # the answer call: $COT$ inside the record is replaced by the reasoning in official mode only
    values = prompts.fields(record(question='Why $COT$?'), '', reasoning='  because  ')
    assert prompts.fill('$Q$ / $COT$', values, 'official') == 'Why because? / because'
    assert prompts.fill('$Q$ / $COT$', values) == 'Why $COT$? / because'
    # the first call never replaces $COT$
    values = prompts.fields(record(question='Why $COT$?'), '')
    assert prompts.fill('$Q$', values, 'official') == 'Why $COT$?'
    with pytest.raises(ValueError, match='mode must be one of'):
        prompts.fill('$Q$', values, 'exact')


def test_fields_are_stripped_and_retrieval_keeps_rank_then_document_order():
    prompt = requests.first_prompt(record(), tasks.NO_CONTEXT)
    assert prompt.startswith('What is the correct answer to this question: Which?\nChoices:\n(A)')
    chunks = [
        {'c_idx': 9, 'content': 'nine'},
        {'c_idx': 2, 'content': 'two'},
        {'c_idx': 5, 'content': 'x'},
    ]
    assert (
        prompts.retrieved_context(chunks, 2) == 'Retrieved chunk 1: two\n\nRetrieved chunk 2: nine'
    )
    with pytest.raises(ValueError, match='at least one chunk'):
        prompts.retrieved_context(chunks, 0)


class Letters:
    """A tokenizer stand-in: one id per character, a BOS (0) in front; decode drops it."""

    @staticmethod
    def codec() -> requests.Codec:
        return requests.Codec(
            encode=lambda text: [0] + [ord(c) for c in text],
            encode_text=lambda text: [ord(c) for c in text],
            decode=lambda ids: ''.join(chr(i) for i in ids if i),
        )


def test_official_cut_keeps_half_the_budget_each_end_with_the_bos_counted():
    codec = Letters.codec()
    assert requests.official_cut('abcdef', 7, codec) == 'abcdef'  # 7 ids with the BOS: whole
    # 8 ids: the first 7 // 2 = 3 (BOS a b) and the last 4 (d e f g), the BOS decoded away
    assert requests.official_cut('abcdefg', 7, codec) == 'abdefg'
    assert requests.official_cut('abcdefghij', 6, codec) == 'abhij'  # BOS a b + h i j
    text = 'x' * 5000
    cut = requests.official_cut('H' + text + 'T', 3001, codec)
    assert len(cut) == 1500 - 1 + 1501 and cut.startswith('H') and cut.endswith('T')
    with pytest.raises(ValueError, match='whole number of tokens >= 1'):
        requests.official_cut('abc', 0, codec)


def test_package_cut_is_on_the_text_alone_head_first():
    codec = Letters.codec()
    assert requests.package_cut('abcdefg', 7, codec) == 'abcdefg'
    assert requests.package_cut('abcdefghij', 5, codec) == 'abcij'  # ceil 3 + floor 2


def test_request_bodies_and_the_second_call():
    codec = Letters.codec()
    options = dict(model='m', budget=10_000, codec=codec, mode='official')
    first = requests.first_request(record(), tasks.CHAIN_OF_THOUGHT, **options)
    assert list(first) == ['messages', 'model', 'max_tokens', 'temperature']
    assert (first['max_tokens'], first['temperature']) == (1024, 0.1)
    assert first['messages'][0]['content'].endswith('(D) four\n\nLet’s think step by step:')
    second = requests.answer_request(record(), tasks.CHAIN_OF_THOUGHT, '  I think B. ', **options)
    assert second['max_tokens'] == 128 and 'The text is too long and omitted here.' in str(second)
    assert 'step by step: I think B.\n\nBased on the above' in second['messages'][0]['content']
    assert requests.answer_request(record(), tasks.CHAIN_OF_THOUGHT, '', **options) is None
    assert requests.answer_request(record(), tasks.ZERO_SHOT, 'x', **options) is None


def test_extraction_on_literal_replies():
    assert extract_answer('**The correct answer is (C)**') == 'C'
    assert extract_answer('The correct answer is B) and The correct answer is (A)') == 'A'
    assert extract_answer('The correct answer is Alpha') == 'A'
    assert extract_answer('the correct answer is (A)') is None
    assert extract_answer('The correct answer is: (A)') is None
    assert extract_answer('The correct answer is  (A)') is None
    assert extract_answer('The correct answer is (E)') is None


def test_an_empty_reply_drops_the_record_in_official_mode_only():
    assert results.result_line(record(), tasks.ZERO_SHOT, [''], 'official') is None
    kept = results.result_line(record(), tasks.ZERO_SHOT, [''])
    assert (kept['response'], kept['pred'], kept['judge']) == ('', None, False)
    blank = results.result_line(record(), tasks.ZERO_SHOT, [' \n'], 'official')
    assert (blank['response'], blank['pred'], blank['judge']) == ('', None, False)
    assert results.result_line(record(), tasks.CHAIN_OF_THOUGHT, [''], 'official') is None
    wrong = results.result_line(record(), tasks.CHAIN_OF_THOUGHT, [''])
    assert (wrong['response_cot'], wrong['judge']) == ('', False)
    right = results.result_line(record(), tasks.CHAIN_OF_THOUGHT, ['B!', 'The correct answer is B'])
    assert list(right)[-4:] == ['response_cot', 'response', 'pred', 'judge'] and right['judge']
    with pytest.raises(ValueError, match='takes 2 replies'):
        results.result_line(record(), tasks.CHAIN_OF_THOUGHT, ['reasoning'])


def test_cells_round_as_python_prints_and_a_missing_class_is_a_dash():
    assert accuracy_cell(13, 42) == '31.0' and accuracy_cell(1, 3) == '33.3'
    assert accuracy_cell(0, 0) == '-'
    lines = [
        {'judge': True, 'difficulty': 'easy', 'length': 'short', 'pred': 'A'},
        {'judge': False, 'difficulty': 'hard', 'length': 'long', 'pred': None},
    ]
    assert row_cells(lines) == ['50.0', '100.0', '0.0', '100.0', '-', '0.0']
    assert row_cells(lines, compensated=True)[0] == '62.5'
    assert table_text([('m', ['1.0'] * 6)]) == (
        'Model\tOverall\tEasy\tHard\tShort\tMedium\tLong\nm\t1.0\t1.0\t1.0\t1.0\t1.0\t1.0'
    )


def test_the_loader_streams_arrays_and_json_lines_through_small_slices(tmp_path, monkeypatch):
    monkeypatch.setattr(json_stream, '_SLICE', 7)  # every record spans several reads
    many = [record(_id=f'r{i}', context='长' * (i * 13)) for i in range(5)]
    array = tmp_path / 'data.json'
    array.write_text(json.dumps(many, ensure_ascii=False, indent=2), 'utf-8')
    assert load_records(array) == many
    lines = tmp_path / 'data.jsonl'
    lines.write_text(''.join(json.dumps(r) + '\n' for r in many))
    assert [r['_id'] for r in iter_records(lines, SCORING_FIELDS)] == [f'r{i}' for i in range(5)]
    assert list(load_records(lines, SCORING_FIELDS)[0]) == list(SCORING_FIELDS)


@pytest.mark.parametrize(
    ('text', 'message'),
    [
        (
            '[' + json.dumps(record(difficulty='Easy')) + ']',
            r"record 1 \(_id 'r1'\): \"difficulty\" must be one of easy, hard",
        ),
        ('[' + json.dumps(record()) + ',' + json.dumps(record()) + ']', "_id 'r1' occurs twice"),
        ('[' + json.dumps(record()) + ' 5]', 'expected "," or "]"'),
        ('[' + json.dumps(record()), 'not closed'),
        ('[' + json.dumps(record())[:-9], 'not valid JSON'),
        ('[3]', 'item 1 .* is a int, not an object'),
        ('[]', 'holds no records'),
    ],
)
def test_loader_errors_name_the_file_record_and_fix(tmp_path, text, message):
    path = tmp_path / 'data.json'
    path.write_text(text)
    with pytest.raises(LongBenchV2DataError, match=message):
        load_records(path)


def test_retrieval_chunks_are_checked(tmp_path):
    path = tmp_path / 'data.json'
    path.write_text(json.dumps([record(retrieved_context=[{'c_idx': '1', 'content': 'x'}])]))
    with pytest.raises(LongBenchV2DataError, match='chunk 1 must be an object with an integer'):
        load_records(path, retrieval=True)


def test_the_scorer_skips_what_is_no_result_file_and_refuses_bad_lines(tmp_path):
    folder = tmp_path / 'results'
    folder.mkdir()
    (folder / 'notes.txt').write_text('x')
    with pytest.raises(LongBenchV2DataError, match='holds no'):
        score_and_write(folder)
    (folder / 'm.jsonl').write_text(json.dumps({'difficulty': 'easy', 'length': 'short'}) + '\n')
    with pytest.raises(LongBenchV2DataError, match=r'm.jsonl, record 1: needs judge'):
        score_and_write(folder, mode='official')
    line = {
        'difficulty': 'easy',
        'length': 'short',
        'judge': False,
        'response': 'The correct answer is (B)',
        'answer': 'B',
    }
    (folder / 'm.jsonl').write_text(json.dumps(line) + '\n')
    printed = score_and_write(folder)
    assert printed[1] == 'm\t100.0\t100.0\t-\t100.0\t-\t-'
    assert 'm.jsonl: 1 stored judgements differ from the replies' in printed
    assert 'skipped (not result files): notes.txt' in printed
    assert score_and_write(folder, mode='official')[1].startswith('m\t0.0')
    with pytest.raises(ValueError, match='default mode'):
        score_and_write(folder, mode='official', data=tmp_path / 'data.json')


def test_synthetic_records_cover_every_class_and_read_back(tmp_path):
    from opencompass_lveval.longbench_v2.synthetic import synthetic_records, write_synthetic

    made = synthetic_records(12, seed=3)
    assert made == synthetic_records(12, seed=3) != synthetic_records(12, seed=4)
    assert {(r['difficulty'], r['length']) for r in made} == {
        (d, n) for d in tasks.DIFFICULTIES for n in tasks.LENGTHS
    }
    for r in made:
        colour, room = r['question'].split()[3], r['choice_' + r['answer']].removeprefix('In the ')
        fact = f'The {colour} key was left in the {room}.'
        assert r['context'].count(fact) == 1
        assert fact in requests.first_prompt(r, tasks.RETRIEVAL, rag=2)  # the top chunks hold it
    path = write_synthetic(tmp_path, count=6, seed=3)
    assert load_records(path, retrieval=True) == made[:6]
    assert (tmp_path / 'SYNTHETIC.txt').is_file()
