"""Ada-LEval: constants, prompts, both extraction modes, metrics, loaders, scoring command."""

import json

import pytest
from official import python_literal
from parity_data import data_json, data_lines

from opencompass_lveval.adaleval.data import AdaLEvalDataError, load_task, locate, read_records
from opencompass_lveval.adaleval.dataset import PROMPT_PARTS, AdaLEvalDataset
from opencompass_lveval.adaleval.extraction import (
    bestanswer_official,
    bestanswer_strict,
    extract_bestanswer,
    extract_tsort,
    tsort_official,
    tsort_strict,
)
from opencompass_lveval.adaleval.metrics import judge, summarise
from opencompass_lveval.adaleval.prompts import (
    BESTANSWER_END_PROMPT,
    BESTANSWER_META_PROMPT,
    TSORT_INSTRUCTION,
    bestanswer_prompt,
    tsort_prompt,
)
from opencompass_lveval.adaleval.records import move_accepted_answer
from opencompass_lveval.adaleval.tasks import BESTANSWER, TSORT, official_sample_count
from opencompass_lveval.cli import main


@pytest.fixture(scope='module')
def reference():
    """The official constants (tests/data/reference, a copy of ../shared/reference)."""
    return data_json('reference/adaleval_official.json')


def test_constants_match_the_reference_byte_for_byte(reference):
    best, tsort = reference['bestanswer'], reference['tsort']
    # The meta prompt as the official literal evaluates: its six \\n escapes are newlines.
    assert best['meta_prompt'].count('\\n') == 6
    assert BESTANSWER_META_PROMPT.encode() == python_literal(best['meta_prompt']).encode()
    assert '\\' not in BESTANSWER_META_PROMPT and 'sample. \n\nHowever' in BESTANSWER_META_PROMPT
    assert BESTANSWER_END_PROMPT.encode() == python_literal(best['end_prompt']).encode()
    assert TSORT_INSTRUCTION.encode() == python_literal(tsort['instruction']).encode()
    assert list(BESTANSWER.settings) == best['settings']
    assert list(TSORT.settings) == tsort['settings_in_paper']
    assert list(BESTANSWER.fields) == best['fields']
    assert BESTANSWER.in_context_example == best['in_context_example_answer']
    assert TSORT.in_context_example == tsort['in_context_example_answer']
    assert BESTANSWER.file_name('4k') == best['file'].format(setting='4k')
    assert TSORT.file_name('4k') == tsort['file'].format(setting='4k')
    assert official_sample_count('16k') == best['samples_normal_mode']['below_32k']
    assert official_sample_count('32k') == best['samples_normal_mode']['32k_and_above']
    assert (official_sample_count('16k', cheap=True), official_sample_count('64k', True)) == (
        200,
        50,
    )
    from opencompass_lveval.adaleval.build import TSORT_LIMITS

    limits = tsort['build_limits_tokens_gpt4_tokenizer']
    assert {
        setting: (v['before'], v['segments'], v['after'], v['stride'])
        for setting, v in limits.items()
    } == TSORT_LIMITS


def test_bestanswer_prompt_follows_the_question_block():
    prompt = bestanswer_prompt('How?', ['Like this.', 'Like that.'])
    assert prompt == (
        BESTANSWER_META_PROMPT + 'The question is given below.\nHow?\n\n'
        'Possible answers are given below.\nA1:\n\nLike this.\n\n'
        'A2:\n\nLike that.\n\n' + BESTANSWER_END_PROMPT
    )
    assert tsort_prompt('b', ['p1', 'p2', 'p3', 'p4'], 'a') == (
        TSORT_INSTRUCTION + 'Before: b\n\n\nPart 1: p1\n\n\nPart 2: p2\n\n\nPart 3: p3\n\n\n'
        'Part 4: p4\n\n\nAfter: a\n\n\n'
    )


def test_official_mode_reproduces_all_600_golden_cases():
    cases = [json.loads(line) for line in data_lines('golden/adaleval/cases.jsonl')]
    assert len(cases) == 600
    wrong = []
    for case in cases:
        if case['task'] == 'bestanswer':
            got = extract_bestanswer(
                case['prediction'], case['answer'], case['num_choice'], 'official'
            )
            ok = got.extracted == case['official_extracted'] and got.hit == case['official_hit']
        else:
            got = extract_tsort(case['prediction'], case['answer'], 'official')
            ok = (
                got.official_error == case['official_error'] and got.hit is False
                if case['official_error']
                else got.hit == case['official_hit'] and got.official_error is None
            )
        if not ok:
            wrong.append((case, got))
    assert wrong == []
    assert sum(c['task'] == 'tsort' and c['official_error'] == 'TypeError' for c in cases) == 57


@pytest.mark.parametrize(
    'prediction, num_choice, official, strict',
    [
        ('A12 is the most helpful; A19 is less helpful.', 20, 'A19', 'A12'),  # issue #5
        ('A9. A38 is wrong.', 40, 'A38', 'A9'),
        ('A12', 20, 'A12', 'A12'),  # official: found A1 and A12, keeps the highest
        ('A760', 101, 'A76', None),  # out of range: no designation
        ('a36', 40, 'A36', 'A36'),
        ('answer 4', 114, 'A4', 'A4'),
        ('22', 26, 'A22', 'A22'),
        ('The best is **A3**.', 5, 'A3', 'A3'),
        ('', 10, '???', None),
    ],
)
def test_bestanswer_modes(prediction, num_choice, official, strict):
    assert bestanswer_official(prediction, num_choice) == official
    assert bestanswer_strict(prediction, num_choice) == strict


@pytest.mark.parametrize(
    'prediction, answer, official_hit, strict',
    [
        ('[]', [4, 2, 3, 1], True, None),  # zip over nothing: a hit for the official code
        ('[1, 2]', [1, 2, 4, 3], True, None),
        ('[2, 1, 3, 4, 1]', [2, 1, 3, 4], True, None),
        ('Answer: "1342"', [1, 3, 4, 2], False, [1, 3, 4, 2]),
        ('Part 4 -> Part 1 -> Part 3 -> Part 2', [4, 1, 3, 2], True, [4, 1, 3, 2]),
        ('The correct order is [1, 4, 3, 2] because [4, 3, 2, 1]', [1, 4, 3, 2], False, None),
        ('Answer: [2, 4, 1, 3] Answer: [1, 2, 3, 4]', [2, 4, 1, 3], True, None),  # two answers
    ],
)
def test_tsort_modes(prediction, answer, official_hit, strict):
    assert extract_tsort(prediction, answer, 'official').hit is official_hit
    assert tsort_strict(prediction) == strict
    assert extract_tsort(prediction, answer).hit is (strict == answer)


def test_tsort_official_crash_is_a_flagged_miss():
    assert tsort_official('3421') == 3421
    result = extract_tsort('3421', [3, 4, 2, 1], 'official')
    assert result.hit is False and result.official_error == 'TypeError'
    assert extract_tsort('3421', [3, 4, 2, 1]).hit  # strict reads the four digits


def test_summary_rates_on_literal_responses():
    predictions = ['Answer: A4', 'A2', 'no idea', None]
    extractions = judge(BESTANSWER, predictions, ['A4', 'A1', 'A1', 'A2'], [4, 2, 8, 3])
    summary = summarise(BESTANSWER, predictions, extractions, [4, 2, 8, 3])
    assert summary == {
        'accuracy': 25.0,
        'instruction_following': 50.0,
        'copy_instruction': 25.0,
        'copy_instruction_chance': round(100 * (1 / 4 + 1 / 8) / 4, 2),
        'random_guess': round(100 * (1 / 4 + 1 / 2 + 1 / 8 + 1 / 3) / 4, 2),
        'samples': 4,
        'official_errors': 0,
        'non_string_predictions': 1,
    }
    predictions = ['[4, 1, 3, 2]', '[1, 2, 3, 4]', '1234 or 4321', '7']
    extractions = judge(TSORT, predictions, [[4, 1, 3, 2]] * 4, [24] * 4, mode='official')
    summary = summarise(TSORT, predictions, extractions, [24] * 4)
    assert summary['accuracy'] == 25.0 and summary['copy_instruction'] == 25.0
    assert summary['instruction_following'] == 50.0
    assert summary['random_guess'] == summary['copy_instruction_chance'] == 4.17
    assert summary['official_errors'] == 1


def test_real_stackselect_file_loads_with_official_counts(stackselect_dir):
    records = load_task('bestanswer', '1k', str(stackselect_dir))
    assert len(records) == 1000 and records[0]['question_id'] == '38560748'
    assert len(load_task('bestanswer', '1k', str(stackselect_dir), cheap=True)) == 200
    dataset = AdaLEvalDataset.load(
        task='bestanswer', setting='1k', path=str(stackselect_dir), limit=3
    )
    assert dataset.column_names == ['answer', 'num_choice', 'instruction', 'body', 'closing']
    first, row = records[0], dataset[0]
    assert row['instruction'] == BESTANSWER_META_PROMPT and row['closing'] == BESTANSWER_END_PROMPT
    prompt = row['instruction'] + row['body'] + row['closing']
    assert prompt == bestanswer_prompt(first['question'], first['all_answers'])
    assert dataset['num_choice'][0] == len(first['all_answers'])


def test_position_bias_moves_the_accepted_answer():
    answers = ['a', 'b', 'c', 'd', 'e']
    assert move_accepted_answer(answers, 'A4', 'front') == (['d', 'a', 'b', 'c', 'e'], 'A1')
    assert move_accepted_answer(answers, 'A4', 'middle') == (['a', 'b', 'd', 'c', 'e'], 'A3')
    assert move_accepted_answer(answers, 'A1', 'rear') == (['b', 'c', 'd', 'e', 'a'], 'A5')


def test_position_variant_dataset(stackselect_dir):
    plain = AdaLEvalDataset.load(
        task='bestanswer', setting='1k', path=str(stackselect_dir), limit=20
    )
    rear = AdaLEvalDataset.load(
        task='bestanswer', setting='1k', path=str(stackselect_dir), limit=20, position='rear'
    )
    assert rear['answer'] == [f'A{n}' for n in rear['num_choice']]
    assert rear['num_choice'] == plain['num_choice'] and rear['body'] != plain['body']


def write_json(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding='utf-8')
    return path


def test_tsort_records_from_prompt_or_parts(tmp_path):
    records = [
        dict(book_id=1, para_offset=[0, 1, 2, 3], answer='[2, 1, 4, 3]', prompt='P'),
        dict(
            book_id=2,
            para_offset=[4, 5, 6, 7],
            answer=[1, 2, 3, 4],
            before='b',
            parts=['1', '2', '3', '4'],
            after='a',
        ),
    ]
    write_json(tmp_path / 'nested' / 'textsort_2k.json', records)
    dataset = AdaLEvalDataset.load(task='tsort', setting='2k', path=str(tmp_path), limit=2)
    assert dataset['answer'] == ['[2, 1, 4, 3]', '[1, 2, 3, 4]']
    prompts = [''.join(row[part] for part in PROMPT_PARTS) for row in dataset]
    assert prompts == ['P', tsort_prompt('b', ['1', '2', '3', '4'], 'a')]
    assert dataset['instruction'] == ['', TSORT_INSTRUCTION] and dataset['closing'] == ['', '']


@pytest.mark.parametrize(
    'records, message',
    [
        (
            [{'book_id': 1, 'para_offset': [], 'answer': [1, 2, 3], 'prompt': 'p'}],
            'item 0: "answer" must be a permutation',
        ),
        (
            [{'book_id': 1, 'para_offset': [], 'answer': [1, 2, 3, 4]}],
            'needs a non-empty "prompt" string',
        ),
        (
            [{'book_id': 1, 'para_offset': [], 'answer': [1, 2, 3, 4], 'prompt': ''}],
            'needs a non-empty "prompt" string',
        ),  # was KeyError: 'before'
        (
            [
                {
                    'book_id': 1,
                    'para_offset': [],
                    'answer': [1, 2, 3, 4],
                    'before': 'b',
                    'after': 'a',
                    'parts': ['1', '2', '3'],
                }
            ],
            '"parts", a list of 4 non-empty strings',
        ),
        (
            [
                {
                    'book_id': 1,
                    'para_offset': [],
                    'answer': [1, 2, 3, 4],
                    'before': 'b',
                    'after': 'a',
                    'parts': [1, None, {}, []],
                }
            ],
            '"parts", a list of 4 non-empty strings',
        ),
        (
            [{'book_id': 1, 'para_offset': [], 'answer': [1, 2, 3, 4], 'prompt': 7}],
            '"prompt" must be a string, found int',
        ),
        (
            [{'book_id': 1, 'answer': [1, 2, 3, 4], 'prompt': 'p'}],
            r"missing field\(s\) \['para_offset'\]",
        ),
        ({'not': 'a list'}, 'non-empty JSON array'),
    ],
)
def test_bad_tsort_files_name_file_and_item(tmp_path, records, message):
    path = write_json(tmp_path / 'textsort_2k.json', records)
    with pytest.raises(AdaLEvalDataError, match=message) as error:
        read_records(path, TSORT, '2k')
    assert str(path) in str(error.value)


def test_bad_bestanswer_items_and_files(tmp_path):
    good = dict(question_id='1', question='q', all_answers=['x', 'y'], answer='A2', tags=[])
    path = write_json(tmp_path / 'stackselect_1k.json', [good, {**good, 'answer': 'A3'}])
    with pytest.raises(AdaLEvalDataError, match=r'item 1: "answer" must be a designation A1..A2'):
        read_records(path, BESTANSWER, '1k')
    path.write_text('[{"broken": ', encoding='utf-8')
    with pytest.raises(AdaLEvalDataError, match='is not valid JSON'):
        read_records(path, BESTANSWER, '1k')
    with pytest.raises(AdaLEvalDataError, match='stackselect_2k.json not found.*fetch_data.sh'):
        locate(tmp_path, BESTANSWER, '2k')
    with pytest.raises(AdaLEvalDataError, match="setting '3 k' is not a size"):
        locate(tmp_path, BESTANSWER, '3 k')


def test_truncated_paper_file_is_refused_other_settings_are_not(tmp_path, stackselect_dir):
    records = json.loads((stackselect_dir / 'stackselect_1k.json').read_text('utf-8'))
    path = write_json(tmp_path / 'stackselect_1k.json', records[:500])
    with pytest.raises(
        AdaLEvalDataError,
        match='holds 500 records, but the official code uses the first 1000 at 1k.*set limit=500',
    ):
        read_records(path, BESTANSWER, '1k')
    assert len(read_records(path, BESTANSWER, '1k', cheap=True)) == 200  # cheap mode uses 200
    assert len(read_records(path, BESTANSWER, '1k', limit=500)) == 500  # a subset on purpose
    built = write_json(tmp_path / 'stackselect_256k.json', records[:30])  # not a paper setting
    assert len(read_records(built, BESTANSWER, '256k')) == 30


def test_score_adaleval_command(tmp_path, capsys):
    lines = [
        {'prediction': 'Answer: A4', 'answer': 'A4', 'num_choice': 5},
        {'prediction': 'A12 is better than A19', 'answer': 'A12', 'num_choice': 20},
    ]
    path = tmp_path / 'responses.jsonl'
    path.write_text(''.join(json.dumps(line) + '\n' for line in lines), encoding='utf-8')
    assert main(['score-adaleval', '--task', 'bestanswer', str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary['accuracy'] == 100.0 and summary['copy_instruction'] == 50.0
    scored = [
        json.loads(line)
        for line in (tmp_path / 'responses.scored.jsonl').read_text('utf-8').splitlines()
    ]
    assert [(s['extracted'], s['hit']) for s in scored] == [('A4', True), ('A12', True)]
    assert (
        main(['score-adaleval', '--task', 'bestanswer', '--extraction', 'official', str(path)]) == 0
    )
    assert json.loads(capsys.readouterr().out)['accuracy'] == 50.0
    path.write_text(json.dumps({'prediction': 'A1', 'answer': 'A1'}) + '\n', encoding='utf-8')
    assert main(['score-adaleval', '--task', 'bestanswer', str(path)]) == 2
    assert 'line 1: BestAnswer needs "num_choice"' in capsys.readouterr().err


def test_summary_groups_follow_the_datasets_of_the_run():
    from opencompass_lveval.framework.benchmarks import named

    adaleval = named('adaleval')
    groups = {g['name']: g['subsets'] for g in adaleval.summary()[1]}
    assert groups['AdaLEval_bestanswer'][0] == ['AdaLEval_bestanswer_1k', 'accuracy']
    assert len(groups['AdaLEval_bestanswer']) == 10 and len(groups['AdaLEval_tsort']) == 7
    assert groups['AdaLEval_2k'] == [
        ['AdaLEval_bestanswer_2k', 'accuracy'],
        ['AdaLEval_tsort_2k', 'accuracy'],
    ]
    run = ['AdaLEval_bestanswer_1k', 'AdaLEval_tsort_4k', 'LVEval_cmrc_mixup_16k']
    rows, found = adaleval.summary(run)
    assert [g['name'] for g in found] == [
        'AdaLEval_bestanswer',
        'AdaLEval_tsort',
        'AdaLEval_1k',
        'AdaLEval_4k',
    ]
    assert rows[4:6] == [
        ['AdaLEval_bestanswer_1k', 'accuracy'],
        ['AdaLEval_bestanswer_1k', 'instruction_following'],
    ]
    assert len(rows) == 4 + 2 * 5


def test_synthetic_adaleval_files_load_and_are_deterministic(tmp_path):
    from opencompass_lveval.adaleval.build import write_synthetic
    from opencompass_lveval.adaleval.synthetic import tsort_synthetic_records

    paths = write_synthetic(tmp_path, count=4)
    assert sorted(p.name for p in paths) == [
        'stackselect_1k.json',
        'stackselect_2k.json',
        'textsort_2k.json',
        'textsort_4k.json',
    ]
    short = load_task('bestanswer', '1k', str(tmp_path), limit=4)
    longer = load_task('bestanswer', '2k', str(tmp_path), limit=4)
    assert [r['question'] for r in short] == [r['question'] for r in longer]
    assert all(len(b['all_answers']) > len(a['all_answers']) for a, b in zip(short, longer))
    assert tsort_synthetic_records('2k', 3) == tsort_synthetic_records('2k', 3)
    case = tsort_synthetic_records('2k', 1)[0]
    # Reading the parts in the answer's order gives the chronicle's years in sequence.
    body = case['prompt'].rpartition('Before: ')[2]  # after the instruction's sample
    years = [
        int(body.split(f'Part {number}: In the year ')[1].split()[0]) for number in case['answer']
    ]
    assert years == sorted(years)


def test_what_a_middle_cut_must_keep():
    """The shipped configs mark the part of each prompt a middle cut may shorten; everything
    outside the mark is kept: BestAnswer's meta prompt and end prompt, TSort's instruction (and in
    perplexity mode the order scored), LV-Eval's instructions and question around the context."""
    from shipped import shipped_prompt

    from opencompass_lveval.lveval.tasks import TASKS_BY_NAME
    from opencompass_lveval.prompts.cuttable import MarkedText

    def marked(abbr, record, **kwargs):
        prompt = shipped_prompt(abbr, record, **kwargs)
        if isinstance(prompt, str):
            return str(prompt), prompt.cuttable
        assert len(prompt) == 1 and prompt[0]['role'] == 'HUMAN'
        return prompt[0]['prompt'], prompt[0]['cuttable']

    sample = BESTANSWER.sample(
        {'question': 'How?', 'all_answers': ['Like this.', 'Like that.'], 'answer': 'A1'}, None
    )
    parts = {part: getattr(sample, part) for part in PROMPT_PARTS}
    text, (start, end) = marked('AdaLEval_bestanswer_1k', parts)
    assert text == bestanswer_prompt('How?', ['Like this.', 'Like that.'])
    assert text[:start] == BESTANSWER_META_PROMPT and text[end:] == BESTANSWER_END_PROMPT
    assert text[start:].startswith('The question is given below.\nHow?')
    sort = tsort_prompt('b', ['1', '2', '3', '4'], 'a')
    parts = {
        part: getattr(TSORT.sample({'prompt': sort, 'answer': [1, 2, 3, 4]}), part)
        for part in PROMPT_PARTS
    }
    text, (start, end) = marked('AdaLEval_tsort_2k', parts)
    assert text == sort and (start, end) == (len(TSORT_INSTRUCTION), len(sort))
    ppl = shipped_prompt('AdaLEval_tsort_ppl_2k', parts, label='[1, 2, 3, 4]', mode='ppl')
    assert isinstance(ppl, MarkedText) and ppl == sort + 'Answer: [1, 2, 3, 4]'
    assert ppl.cuttable == (len(TSORT_INSTRUCTION), len(sort))
    # A TSort prompt without the official instruction: all of it is body, nothing protected.
    other = {
        part: getattr(TSORT.sample({'prompt': 'P', 'answer': [1, 2, 3, 4]}), part)
        for part in PROMPT_PARTS
    }
    assert marked('AdaLEval_tsort_2k', other) == ('P', (0, 1))
    task = TASKS_BY_NAME['loogle_SD_mixup']
    record = {'context': 'Passage 0\nThe mill. Question: fake?', 'input': 'Who?'}
    text, (start, end) = marked(task.abbr('16k'), record)
    assert text == task.prompt.format(**record) and text[start:end] == record['context']
    assert text[:start].endswith('Article: ') and text[end:].startswith('\n\nPlease answer')


def test_official_bestanswer_reading_equals_the_official_loop_without_its_cost():
    """The official code tries A1..An and 1..n as substrings; the digit-run reading must give the
    same on any response, and stay fast where the loop would allocate n candidates."""
    import random
    import time

    def official_loop(prediction, num_choice):
        for candidates in (
            [f'A{i}' for i in range(1, num_choice + 1)],
            [str(i) for i in range(1, num_choice + 1)],
        ):
            found = [i for i, c in enumerate(candidates, 1) if c in prediction]
            if found:
                return f'A{found[-1]}'
        return '???'

    rng = random.Random(0)
    for _ in range(3000):
        n = rng.choice([1, 2, 5, 9, 10, 11, 20, 99, 100, 101, 150, 1000])
        response = ''.join(rng.choice('A0123456789 a.') for _ in range(rng.randint(0, 14)))
        assert bestanswer_official(response, n) == official_loop(response, n), (response, n)
    start = time.perf_counter()
    assert bestanswer_official('7' * 1_000_000, 10_000) == 'A7777'
    assert time.perf_counter() - start < 2
