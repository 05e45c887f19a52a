"""The OpenCompass side: registration, dataset construction, prompts, evaluator, configs."""
import json
from pathlib import Path

import pytest

import opencompass_lveval
from opencompass_lveval.dry_run import check_config
from opencompass_lveval.lveval.dataset import LVEvalDataset
from opencompass_lveval.lveval.evaluator import LVEvalEvaluator
from opencompass_lveval.lveval.synthetic import write_synthetic_data
from opencompass_lveval.lveval.tasks import TASKS_BY_NAME

REPO = Path(__file__).resolve().parents[1]
READER = dict(input_columns=['context', 'input'], output_column='answers', train_split='test',
              test_split='test')


def test_importing_the_package_registers_classes():
    from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET
    assert LOAD_DATASET.get('LVEvalDataset') is opencompass_lveval.LVEvalDataset
    assert ICL_EVALUATORS.get('LVEvalEvaluator') is opencompass_lveval.LVEvalEvaluator


@pytest.fixture
def tricky_folder(tmp_path):
    records = [
        dict(input='Who wrote it?', context='Code: print(f"{idx} {input} {answers}")',
             answers=['Ada Lovelace'], answer_keywords='Lovelace'),
        dict(input='Where?', context='In Paris.', answers=['Paris', 'France']),
    ]
    (tmp_path / 'loogle_SD_mixup_16k.jsonl').write_text(
        ''.join(json.dumps(r) + '\n' for r in records), encoding='utf-8')
    return tmp_path


def test_dataset_columns_and_literal_braces_in_context(tricky_folder):
    from opencompass.openicl.icl_prompt_template import PromptTemplate
    dataset = LVEvalDataset(abbr='LVEval_loogle_SD_mixup_16k', name='loogle_SD_mixup_16k',
                            path=str(tricky_folder), reader_cfg=READER)
    test = dataset.test
    assert test.column_names == ['answers', 'answer_keywords', 'subdivision', 'idx', 'input',
                                 'context']
    assert test['idx'] == [0, 1]
    assert test['subdivision'] == ['LVEval_loogle_SD_mixup_16k'] * 2
    assert test['answer_keywords'] == ['Lovelace', '']
    prompt_text = TASKS_BY_NAME['loogle_SD_mixup'].prompt
    template = PromptTemplate(dict(round=[dict(role='HUMAN', prompt=prompt_text)]))
    row = test[0]
    rendered = template.generate_item(row, output_field='answers')
    prompt = ''.join(item.get('prompt', '') for item in rendered if isinstance(item, dict))
    assert 'Code: print(f"{idx} {input} {answers}")' in prompt  # context text left untouched
    assert prompt == prompt_text.format(context=row['context'], input=row['input'])


def test_evaluator_through_opencompass_evaluate(tricky_folder):
    dataset = LVEvalDataset(abbr='x', name='loogle_SD_mixup_16k', path=str(tricky_folder),
                            reader_cfg=READER)
    test = dataset.test
    evaluator = LVEvalEvaluator(metric='qa_f1_score_with_gold_ans')
    result = evaluator.evaluate(1, 1, test, predictions=['Charles Babbage', 'paris'],
                                references=test['answers'], test_set=test)
    assert result['score'] == 50.0  # gate fails on the first, second matches answers[0]
    assert result['diagnostics'] == [
        '1 keyword gate failed, 0 unusable keywords, 0 metric errors, 2 samples']
    first, second = result['details']  # OpenCompass lists each field per replica
    assert first['keyword_gate_failed'] == [True] and first['score'] == [0.0]
    assert second['score'] == [1.0] and second['answer'] == ['Paris']


def test_evaluator_rejects_unknown_metric():
    with pytest.raises(ValueError, match='Unknown LV-Eval metric'):
        LVEvalEvaluator(metric='bleu')


def test_eval_config_builds_55_datasets_with_official_prompts(tmp_path, monkeypatch):
    write_synthetic_data(tmp_path, count=2)
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(tmp_path))
    checks = check_config(str(REPO / 'configs' / 'eval_lveval.py'))
    assert len(checks) == 55
    assert all(c.official_prompt for c in checks), [c.abbr for c in checks if not c.official_prompt]
    assert all(c.records == 2 for c in checks)
    by_abbr = {c.abbr: c for c in checks}
    assert by_abbr['LVEval_factrecall_zh_256k'].max_out_len == 16
    assert by_abbr['LVEval_dureader_mixup_16k'].max_out_len == 64
    assert by_abbr['LVEval_cmrc_mixup_256k'].prompt_chars > by_abbr['LVEval_cmrc_mixup_16k'].prompt_chars
