"""RULER as a declared benchmark: its cells, categories and per-task metric; OpenCompass's
evaluator built from its config giving evaluate.py's per-sample and task scores on the golden
predictions; ``lveval score --benchmark ruler`` writing the official CSV files; each model paired
with data of its own tokenizer; the random and extractive baselines answering its prompts."""

from __future__ import annotations

import csv
import json
import random
import re
import shutil
from collections import defaultdict

import pytest
from ruler_files import GOLDEN, LLAMA2_SP

from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.ruler.tasks import TASKS

PRED = GOLDEN / 'scorer' / 'pred'


@pytest.fixture(scope='module')
def ruler():
    return named('ruler')


def test_its_cells_levels_and_categories_are_rulers(ruler, tmp_path):
    assert ruler.tasks == tuple(task.name for task in TASKS) and len(ruler.tasks) == 13
    assert ruler.sizes == ('4k', '8k', '16k', '32k', '64k', '128k')
    assert [ruler.level_tokens[s] for s in ruler.sizes] == [2**n for n in range(12, 18)]
    assert ruler.level_tokens.get('256k') == 262144 and ruler.level_tokens.get('1m') == 2**20
    assert ruler.split_abbr('RULER_niah_multikey_3_256k') == ('niah_multikey_3', '256k')
    (category,) = ruler.factors
    assert category.shown_values() == ('niah', 'vt', 'cwe', 'fwe', 'qa')
    assert category.members('qa', ruler.tasks) == ('qa_1', 'qa_2')
    assert len(category.members('niah', ruler.tasks)) == 8
    assert (
        ruler.data_path(tmp_path, 'vt', '128k') == tmp_path / '131072' / 'vt' / 'validation.jsonl'
    )
    config = ruler.configs(str(tmp_path), ['4k'], ['niah_single_1', 'vt', 'qa_2'])
    assert [c['infer_cfg']['inferencer']['max_out_len'] for c in config] == [128, 30, 32]
    assert [c['eval_cfg']['evaluator']['task'] for c in config] == ['niah_single_1', 'vt', 'qa_2']
    template = config[0]['infer_cfg']['prompt_template']
    assert template['template']['round'][0]['prompt'] == '{input}{answer_prefix}'
    assert template['cut'] == 'input' and config[0]['reader_cfg']['output_column'] == 'outputs'


def test_each_task_is_scored_by_its_own_official_metric(ruler):
    """qa counts a sample when any accepted answer is found; the others count the fraction of
    the answers found. The reply is post-processed as evaluate.py does (a control character
    inside an answer breaks it)."""
    aliases = {'outputs': ['Denver Broncos', 'the Broncos', 'Broncos of Denver']}
    reply = 'the Broncos: Denver Broncos'
    assert ruler.score_task_reply('qa_1', reply, aliases) == {'score': 100.0}
    assert ruler.score_task_reply('niah_multivalue', reply, aliases) == {'score': 100 * (2 / 3)}
    values = {'outputs': ['1234567', '7654321']}
    assert ruler.score_task_reply('niah_multivalue', ' 1234567\n', values) == {'score': 50.0}
    assert ruler.score_task_reply('niah_multivalue', '12\x1b34567', values) == {'score': 0.0}


def golden_cases() -> dict[str, tuple[list[dict], dict]]:
    """Per task: its 30 golden cases and its aggregate line."""
    found: dict = defaultdict(lambda: ([], None))
    for line in (GOLDEN / 'scorer' / 'cases.jsonl').read_text().splitlines():
        case = json.loads(line)
        cases, aggregate = found[case['task']]
        if case['case'] == '__aggregate__':
            found[case['task']] = (cases, case)
        else:
            cases.append(case)
    return dict(found)


def test_the_evaluator_of_its_configs_gives_evaluate_pys_scores_on_the_golden_set(ruler, tmp_path):
    """OpenCompass's evaluator as the run builds it from each task's config, on the 390 golden
    predictions: each sample's score is the official one, each task's score is summary.csv's."""
    from datasets import Dataset
    from opencompass.registry import ICL_EVALUATORS

    with open(PRED / 'summary.csv', newline='') as stream:
        rows = list(csv.reader(stream))
    official = dict(zip(rows[1][1:], rows[2][1:]))
    cases = golden_cases()
    assert sorted(cases) == sorted(ruler.tasks) == sorted(official)
    for config in ruler.configs(str(tmp_path), ['4k']):
        task = config['eval_cfg']['evaluator']['task']
        samples, aggregate = cases[task]
        evaluator = ICL_EVALUATORS.build(config['eval_cfg']['evaluator'])
        records = Dataset.from_list([{'outputs': case['outputs']} for case in samples])
        result = evaluator.score(
            [case['pred'] for case in samples], [case['outputs'] for case in samples], records
        )
        assert result['score'] == float(official[task]) == aggregate['official_score'], task
        found = [round(detail['score'], 2) for detail in result['details']]
        assert found == [case['official_score'] for case in samples], task


def test_lveval_score_benchmark_ruler_writes_the_official_csv_files(tmp_path, capsys):
    from opencompass_lveval.cli import main

    pred_dir = tmp_path / 'pred'
    shutil.copytree(PRED, pred_dir)
    for name in ('summary.csv', 'submission.csv'):
        (pred_dir / name).unlink()
    assert main(['score', '--benchmark', 'ruler', str(pred_dir)]) == 0
    for name in ('summary.csv', 'submission.csv'):
        assert (pred_dir / name).read_bytes() == (PRED / name).read_bytes(), name
    printed = capsys.readouterr().out.splitlines()
    assert printed[1].split() == ['niah_single_1', '66.67', '4/30']
    with pytest.raises(SystemExit):
        main(['score', '--help'])
    assert '--benchmark ruler PRED_DIR' in capsys.readouterr().out


def test_each_model_is_paired_with_its_own_data_at_the_lengths_its_window_holds(ruler):
    short = dict(abbr='short', path=str(LLAMA2_SP), max_seq_len=8192)
    wide = dict(abbr='wide', path='org/model', tokenizer_path='/tok', max_seq_len=131072)
    datasets, combinations = ruler.model_configs(
        [short, wide], tasks=['vt', 'qa_1'], path='cache', count=20
    )
    assert [c['models'] for c in combinations] == [[short], [wide]]
    assert [d['abbr'] for d in combinations[0]['datasets']] == [
        'RULER_vt_4k',
        'RULER_vt_8k',
        'RULER_qa_1_4k',
        'RULER_qa_1_8k',
    ]
    assert len(combinations[1]['datasets']) == 12
    assert [d['data'] for d in combinations[1]['datasets']][0] == dict(tokenizer='/tok', count=20)
    assert combinations[0]['datasets'][0]['data'] == dict(tokenizer=str(LLAMA2_SP), count=20)
    assert {d['path'] for d in datasets} == {'cache'}  # each cell once, for OpenCompass's checks
    assert sorted(d['abbr'] for d in datasets) == sorted(
        d['abbr'] for d in combinations[1]['datasets']
    )
    with pytest.raises(ValueError, match='cpu: no tokenizer_path or path, and RULER builds'):
        ruler.model_configs([dict(abbr='cpu')])


def test_a_models_data_folder_is_named_by_its_tokenizer_files(ruler, tmp_path):
    from opencompass_lveval.files.errors import DataError
    from opencompass_lveval.ruler.tokens import TokenizerError, tokenizer_fingerprint

    data = dict(tokenizer=str(LLAMA2_SP), seed=7, count=20)
    folder = ruler.data_folder(str(tmp_path), data)
    assert folder == tmp_path / f'{tokenizer_fingerprint(LLAMA2_SP)[:16]}-base-seed7-n20'
    assert ruler.data_folder(str(tmp_path)) == tmp_path  # a folder `lveval build ruler` wrote
    with pytest.raises(DataError, match=r'give its tokenizer .*; samples unknown'):
        ruler.data_folder(str(tmp_path), dict(tokenizer='x', samples=3))
    with pytest.raises(TokenizerError, match=r'nobody/nothing: no such folder, .*LVEVAL_ALLOW_HUB'):
        ruler.data_folder(str(tmp_path), dict(tokenizer='nobody/nothing'))


def golden_prompts(task: str) -> list[str]:
    """The golden 4096-token file's prompts as pred/call_api.py sends them."""
    path = GOLDEN / 'data' / '4096' / task / 'validation.jsonl'
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r['input'] + r['answer_prefix'] for r in records]


FORMS = {
    'niah_single_1': r'\d{7}',
    'niah_single_3': r'[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}',
    'vt': r'[A-Z]{5}(, [A-Z]{5}){4}',
    'cwe': r'[a-z-]+(, [a-z-]+){9}',
    'fwe': r'[a-z]{6}, [a-z]{6}, [a-z]{6}',
    'qa_2': r'\w+( \w+){0,2}',
}


@pytest.mark.parametrize('task', FORMS)
def test_the_random_answer_has_the_form_each_task_asks_for(ruler, task):
    for prompt in golden_prompts(task):
        answer = ruler.random_answer(prompt, random.Random(0))
        assert re.fullmatch(FORMS[task], answer), answer
        assert answer == ruler.random_answer(prompt, random.Random(0))
        if task in ('cwe', 'fwe', 'qa_2'):  # words of the prompt's own list, text or documents
            assert all(word in prompt for word in re.split(', | ', answer))
    assert ruler.random_answer('What is the pass key?', random.Random(0)) is None


def test_the_extractive_baseline_answers_rulers_qa_from_its_documents(ruler):
    """qa read as RULER declares: the question after its instructions, the documents' sentences
    as candidates (the instructions left out); read by default the baseline answers with an
    instruction. On the seeded synthetic qa_1 each answer is found."""
    from opencompass_lveval.models.baselines import ExtractiveBaseline, read_prompt

    records = ruler.synthetic_records('qa_1', '4k', 4, seed=0)
    for record in records:
        prompt = record['input'] + record['answer_prefix']
        candidates, question = read_prompt(prompt)
        assert question.startswith('Question: ') and question.endswith('Answer:')
        assert not any('Answer the question' in c or 'Document ' in c for c in candidates)
        assert record['outputs'][0] in ExtractiveBaseline().answer(prompt, 32)
