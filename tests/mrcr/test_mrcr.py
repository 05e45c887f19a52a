"""MRCR on literal strings: both graders' rules and argument order, the bins, the tables and GDM's
cells, the messages, both loaders and the scorer's errors."""

import json
from difflib import SequenceMatcher

import pytest
from parity_data import DATA

from opencompass_lveval.files.errors import MRCRDataError
from opencompass_lveval.mrcr import data, prompts, tasks
from opencompass_lveval.mrcr.build import buckets_up_to
from opencompass_lveval.mrcr.metrics import gdm_mrcr_v2_metric, openai_mrcr_grade
from opencompass_lveval.mrcr.score import score_openai_file, score_v2_file
from opencompass_lveval.mrcr.tables import Cell, bin_table, reporting_cells, table_lines

HASH = 'Ab3dEf6hIj9L'


def test_gdm_metric_takes_the_last_hash_anywhere_and_strips():
    target = f'{HASH}Roses are red.'
    assert gdm_mrcr_v2_metric(f'  {HASH}Roses are red.\n', target) == 1.0
    assert gdm_mrcr_v2_metric(f'<think>hm</think>Sure: {HASH} Roses are red.', target) == 1.0
    assert gdm_mrcr_v2_metric(f'{HASH}Roses are red. {HASH}', target) == 0.0  # empty after it
    assert gdm_mrcr_v2_metric('Roses are red.', target) == 0.0
    assert gdm_mrcr_v2_metric(None, target) == gdm_mrcr_v2_metric('', target) == 0.0
    assert gdm_mrcr_v2_metric(HASH, HASH) == 1.0  # two empty texts
    assert gdm_mrcr_v2_metric('abc', 'abc') == 0.0  # a target under 12 characters
    with pytest.raises(AttributeError):
        gdm_mrcr_v2_metric(HASH, None)


def test_openai_grade_wants_the_prefix_first_and_keeps_its_int_zero():
    answer = 'xYz1234567Roses are red.'
    assert openai_mrcr_grade('xYz1234567Roses are red.', answer, 'xYz1234567') == 1.0
    zero = openai_mrcr_grade(' xYz1234567Roses are red.', answer, 'xYz1234567')
    assert zero == 0 and type(zero) is int
    assert openai_mrcr_grade('xYz1234567', answer, 'xYz1234567') == 0.0
    assert openai_mrcr_grade('Roses', 'Roses', 'xYz1234567') == 0
    with pytest.raises(AttributeError):
        openai_mrcr_grade(None, answer, 'xYz1234567')


def test_the_argument_order_of_sequence_matcher_is_part_of_each_metric():
    case = next(
        json.loads(line)
        for line in (DATA / 'golden' / 'mrcr' / 'openai_mrcr_grade_cases.jsonl').open()
        if json.loads(line)['id'] == 'oai-02-hash_twice_front'
    )
    prefix = case['random_string_to_prepend']
    response = case['response'].removeprefix(prefix)
    answer = case['answer'].removeprefix(prefix)
    grade = openai_mrcr_grade(case['response'], case['answer'], prefix)
    assert round(grade, 4) == 0.0138 == round(case['official_score'], 4)
    assert round(SequenceMatcher(None, answer, response).ratio(), 4) == 0.9937


def test_bins_are_closed_below_only_for_openai_s_first():
    assert tasks.OPENAI.bin_of(4096) == (4096, 8192)
    assert tasks.OPENAI.bin_of(8192) == (4096, 8192)
    assert tasks.OPENAI.bin_of(8193) == (8192, 16384)
    assert tasks.OPENAI.bin_of(1048577) is None and tasks.OPENAI.bin_of(4095) is None
    assert tasks.V2.bin_of(4096) is None and tasks.V2.bin_of(8388608) == (4194304, 8388608)
    assert buckets_up_to(131072) == [
        (65536, 131072),
        (32768, 65536),
        (16384, 32768),
        (8192, 16384),
        (4096, 8192),
    ]
    assert buckets_up_to(1048576, pointwise=True) == [(524288, 1048576)]
    assert buckets_up_to(100_000) == [
        (65536, 100_000),
        (32768, 65536),
        (16384, 32768),
        (8192, 16384),
        (4096, 8192),
    ]


def test_file_names_are_download_sh_s():
    assert tasks.V2_GROUPS['small'][:2] == ('upto_128K', 'in_(4096,8192)')
    assert tasks.V2_GROUPS['large'][-1] == 'in_(4194304,8388608)'
    name = tasks.v2_file_name(8, 'in_(524288,1048576)')
    assert name == 'mrcr_v2p1_8needle_in_(524288,1048576)_dynamic_fewshot_text_style_fast.csv'
    assert tasks.v2_file_cell(name) == (8, (524288, 1048576))
    assert tasks.v2_file_cell(tasks.v2_file_name(2, 'upto_128K')) == (2, (4096, 131072))
    assert (
        tasks.v2_file_cell('mrcr_v2p1_3needle_upto_128K_dynamic_fewshot_text_style_fast.csv')
        is None
    )
    assert [
        tasks.openai_file_needles(n) for n in ('8needle_1.parquet', '2needle.parquet', 'x.parquet')
    ] == [8, 2, None]


def test_tables_and_gdm_s_cells():
    scored = [
        (8, (4096, 8192), 1.0),
        (8, (4096, 8192), 0.5),
        (8, (65536, 131072), 0.0),
        (8, (524288, 1048576), 0.25),
        (4, (524288, 1048576), 1.0),
        (8, None, 1.0),
    ]
    table = bin_table(scored)
    assert list(table) == [
        (4, (524288, 1048576)),
        (8, (4096, 8192)),
        (8, (65536, 131072)),
        (8, (524288, 1048576)),
        (8, None),
    ]
    assert table[(8, (4096, 8192))] == Cell(2, 0.75)
    assert reporting_cells(scored) == {'upto_128K': Cell(3, 0.5), 'at_1M': Cell(1, 0.25)}
    assert reporting_cells([(2, (4096, 8192), 1.0)]) == {'upto_128K': None, 'at_1M': None}
    assert table_lines(table)[2].split() == ['8', '4096-8192', '2', '75.00']


def test_messages_from_json_prompts():
    prompt = json.dumps(
        [{'role': 'user', 'content': 'Write a poem.'}, {'role': 'assistant', 'content': 'Roses.'}]
    )
    assert prompts.chat_messages(prompt)[1] == {'role': 'assistant', 'content': 'Roses.'}
    assert prompts.v2_messages('Here are some examples') == [
        {'role': 'user', 'content': 'Here are some examples'}
    ]
    with pytest.raises(ValueError, match='message 1 must be an object with a "role"'):
        prompts.chat_messages('[{"role": "robot", "content": "x"}]')
    with pytest.raises(ValueError, match='not a JSON array'):
        prompts.chat_messages('[{')
    assert prompts.escape_for_json('é"\n') == '\\u00e9\\"\\n'


def openai_rows() -> list[dict]:
    prompt = json.dumps(
        [
            {'role': 'user', 'content': 'Write a poem about tapirs'},
            {'role': 'assistant', 'content': 'Tapirs.'},
            {'role': 'user', 'content': 'Prepend ab to the 1st poem.'},
        ]
    )
    return [
        {
            'prompt': prompt,
            'answer': 'abTapirs.',
            'random_string_to_prepend': 'ab',
            'n_needles': 2,
            'desired_msg_index': 1,
            'total_messages': 3,
            'n_chars': 60,
        }
    ]


def test_openai_parquet_files_are_found_read_and_counted(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / '2needle').mkdir()
    pq.write_table(pa.Table.from_pylist(openai_rows()), tmp_path / '2needle' / '2needle_0.parquet')
    (tmp_path / 'notes.parquet').write_bytes(b'')
    files = data.openai_files(tmp_path)
    assert [f.name for f in files] == ['2needle_0.parquet']
    record = next(data.openai_records(data.read_openai(files[0])))
    assert record['n_needles'] == 2 and record['prompt'] == openai_rows()[0]['prompt']
    assert 'prompt' not in data.read_openai(files[0], prompts=False).column_names
    assert data.openai_token_count(record, lambda text: len(text.split())) == 5 + 1 + 6 + 1
    with pytest.raises(MRCRDataError, match='holds no openai/mrcr files'):
        data.openai_files(tmp_path, needles=(8,))
    pq.write_table(pa.table({'prompt': ['x']}), tmp_path / '8needle.parquet')
    with pytest.raises(MRCRDataError, match='lacks the column'):
        data.read_openai(tmp_path / '8needle.parquet')


def test_v2_csv_round_trip_keeps_numbers_and_positions(tmp_path):
    row = {
        'queries': 'User: a "quoted",\nmulti-line prompt\n\nAssistant:',
        'answer': f'{HASH}text',
        'context_len': 8032,
        'answer_token_count': 70,
        'view_ops': 'User: Prepend ...',
        'num_relevant': 2,
        'answer_context_position': (3342, 3412),
        'index_positions_of_seeds': [21, 41],
        'relevant_context_positions': [(3342, 3412), (5957, 6070)],
    }
    path = data.write_v2_csv([row], tmp_path / tasks.v2_file_name(2, 'in_(4096,8192)'))
    assert path.read_text().rstrip('\n').endswith('"[21, 41]","[(3342, 3412), (5957, 6070)]"')
    read = list(data.iter_v2_rows(path))
    assert read == [{**row, 'needles': 2, 'bucket': (4096, 8192)}]
    assert data.v2_files(tmp_path) == [path]
    (tmp_path / 'bad.csv').write_text('queries,answer,context_len\nq,a,many\n')
    with pytest.raises(MRCRDataError, match='bad.csv, line 2: context_len must be a whole number'):
        list(data.iter_v2_rows(tmp_path / 'bad.csv'))


def test_scorer_errors_and_per_bin_summary(tmp_path):
    path = tmp_path / 'replies.jsonl'
    path.write_text('{"prediction": "x"}\n')
    with pytest.raises(
        MRCRDataError, match=r'line 1: expected an object with "prediction" and "target"'
    ):
        score_v2_file(path, tmp_path / 'out.jsonl')
    with pytest.raises(MRCRDataError, match='is the input file'):
        score_v2_file(path, path)
    lines = [
        {
            'response': 'abX',
            'answer': 'abX',
            'random_string_to_prepend': 'ab',
            'n_needles': 8,
            'context_tokens': 5000,
        },
        {
            'response': 'X',
            'answer': 'abX',
            'random_string_to_prepend': 'ab',
            'n_needles': 8,
            'context_tokens': 6000,
        },
    ]
    path.write_text(''.join(json.dumps(line) + '\n' for line in lines))
    printed = score_openai_file(path, tmp_path / 'out.jsonl')
    assert printed[0] == 'OpenAI MRCR: 2 lines, mean score 0.5000'
    assert printed[2].split() == ['8', '4096-8192', '2', '50.00']
    assert (tmp_path / 'out.jsonl').read_text() == '{"score": 1.0}\n{"score": 0}\n'


def test_the_static_fewshot_prefixes_are_the_official_constants():
    """sha256 of FEW_SHOT_PREFIX and FEW_SHOT_PREFIX_JSON in eval_hub mrcr_utils.py (67b7fd29)."""
    import hashlib

    digests = [
        hashlib.sha256(p.encode()).hexdigest()
        for p in (prompts.FEW_SHOT_PREFIX, prompts.FEW_SHOT_PREFIX_JSON)
    ]
    assert digests == [
        '571b9c387d6fb322b056076989a8685c65105f3c4cc0706ca2a82209207e88c9',
        '235290fb43fb2eff927e9bbbb2a322e12b5092ffc2797cdcbfeabf8bb00d8f2f',
    ]


def test_synthetic_files_in_both_official_formats_read_back(tmp_path):
    from opencompass_lveval.mrcr.synthetic import write_openai_synthetic, write_v2_synthetic

    written = write_v2_synthetic(tmp_path / 'v2', count=2, seed=5)
    assert [p.name for p in written] == [tasks.v2_file_name(n, 'in_(4096,8192)') for n in (2, 4, 8)]
    assert (
        written[0].read_bytes()
        == write_v2_synthetic(tmp_path / 'again', count=2, seed=5)[0].read_bytes()
    )
    for path in data.v2_files(tmp_path / 'v2'):
        rows = list(data.iter_v2_rows(path))
        assert len(rows) == 2 and all(4096 < row['context_len'] <= 8192 for row in rows)
        for row in rows:
            assert gdm_mrcr_v2_metric(row['answer'], row['answer']) == 1.0
            assert (
                row['view_ops'] in row['queries'] and row['queries'].count(row['answer'][12:]) == 1
            )
    files = write_openai_synthetic(tmp_path / 'openai', count=2, seed=5)
    for needles, path in zip(tasks.NEEDLES, files):
        for record in data.openai_records(data.read_openai(path)):
            messages = prompts.chat_messages(record['prompt'])
            assert record['n_needles'] == needles and len(messages) == record['total_messages']
            wanted = messages[record['desired_msg_index']]['content']
            assert record['answer'] == record['random_string_to_prepend'] + wanted
            assert (
                openai_mrcr_grade(
                    record['answer'], record['answer'], record['random_string_to_prepend']
                )
                == 1.0
            )


def test_the_assembler_refuses_what_the_official_crashes_or_hangs_on():
    from opencompass_lveval.mrcr.build import generate_mrcr_v2
    from opencompass_lveval.mrcr.synthetic import v2_texts

    texts = v2_texts(0)
    options = dict(
        needles=2,
        samples_per_bucket=1,
        buckets=[(4096, 8192)],
        static_fewshot=False,
        json_style=False,
        count_tokens=lambda text: len(text.split()),
        seed=0,
    )
    braced = {**texts, 'relevant': {'po{em}': texts['relevant']['poem']}}
    with pytest.raises(ValueError, match='must not hold braces'):
        generate_mrcr_v2(braced, **options)
    lonely = {'poem': {'kites': {'gothic': {'seed1': 'one text only'}}}}
    with pytest.raises(ValueError, match='needs a second text'):
        generate_mrcr_v2({**texts, 'fewshot': lonely}, **options)
    with pytest.raises(ValueError, match='needles must be 1 to 8'):
        generate_mrcr_v2(texts, **{**options, 'needles': 9})
