"""The OpenCompass side: registration, dataset construction, prompts, evaluator, configs."""

import json
from pathlib import Path

import pytest

import opencompass_lveval
from opencompass_lveval.commands.dry_run import check_config
from opencompass_lveval.lveval.dataset import LVEvalDataset
from opencompass_lveval.lveval.evaluator import LVEvalEvaluator
from opencompass_lveval.lveval.synthetic import write_synthetic
from opencompass_lveval.lveval.tasks import TASKS_BY_NAME

REPO = Path(__file__).resolve().parents[1]
READER = dict(
    input_columns=['context', 'input'],
    output_column='answers',
    train_split='test',
    test_split='test',
)


def test_importing_the_package_registers_classes():
    from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET

    assert LOAD_DATASET.get('LVEvalDataset') is opencompass_lveval.LVEvalDataset
    assert ICL_EVALUATORS.get('LVEvalEvaluator') is opencompass_lveval.LVEvalEvaluator


@pytest.fixture
def tricky_folder(tmp_path):
    records = [
        dict(
            input='What does {context} print?',
            context='Code: print(f"{idx} {input} {answers}")',
            answers=['Ada Lovelace'],
            answer_keywords='Lovelace',
        ),
        dict(input='Where?', context='In Paris.', answers=['Paris', 'France']),
    ]
    (tmp_path / 'loogle_SD_mixup_16k.jsonl').write_text(
        ''.join(json.dumps(r) + '\n' for r in records), encoding='utf-8'
    )
    return tmp_path


def test_dataset_columns(tricky_folder):
    dataset = LVEvalDataset(
        abbr='LVEval_loogle_SD_mixup_16k',
        name='loogle_SD_mixup_16k',
        path=str(tricky_folder),
        reader_cfg=READER,
    )
    test = dataset.test
    assert test.column_names == [
        'input',
        'context',
        'answers',
        'answer_keywords',
        'subdivision',
        'idx',
        'data_fingerprint',
        'data_origin',
    ]
    # The fingerprint is the content's: the same file elsewhere gives the same, an edit another.
    fingerprint = test['data_fingerprint'][0]
    copy = tricky_folder / 'copy'
    copy.mkdir()
    source = tricky_folder / 'loogle_SD_mixup_16k.jsonl'
    (copy / source.name).write_bytes(source.read_bytes())
    elsewhere = LVEvalDataset(
        abbr='x', name='loogle_SD_mixup_16k', path=str(copy), reader_cfg=READER
    )
    assert elsewhere.test['data_fingerprint'] == [fingerprint] * 2 and len(fingerprint) == 40
    (copy / source.name).write_bytes(source.read_bytes().replace(b'Paris.', b'Lyon.'))
    edited = LVEvalDataset(abbr='x', name='loogle_SD_mixup_16k', path=str(copy), reader_cfg=READER)
    assert edited.test['data_fingerprint'][0] != fingerprint
    assert test['idx'] == [0, 1]
    assert test['subdivision'] == ['LVEval_loogle_SD_mixup_16k'] * 2
    assert test['answer_keywords'] == ['Lovelace', '']
    # Data of `lveval data synth` (its mark beside the file) says so in every result's provenance.
    from opencompass_lveval.framework.benchmarks import mark_synthetic
    from opencompass_lveval.report.provenance import provenance

    assert test['data_origin'] == ['files'] * 2 and 'data_origin' not in provenance(test)
    mark_synthetic(copy)
    synthetic = LVEvalDataset(
        abbr='x', name='loogle_SD_mixup_16k', path=str(copy), reader_cfg=READER
    )
    assert provenance(synthetic.test)['data_origin'] == 'synthetic'


def test_template_fills_fields_in_one_pass_through_the_inferencer(tricky_folder, tmp_path):
    """A question holding ``{context}`` and a context holding ``{input}`` reach the model as they
    are, through OpenCompass's retriever and GenInferencer; OpenCompass's own template pastes the
    context into the question."""
    from opencompass.openicl.icl_inferencer import GenInferencer
    from opencompass.openicl.icl_prompt_template import PromptTemplate
    from opencompass.openicl.icl_retriever import ZeroRetriever
    from opencompass.registry import ICL_PROMPT_TEMPLATES

    from opencompass_lveval.models import RandomGuessBaseline
    from opencompass_lveval.prompts.prompt_template import LongContextPromptTemplate

    assert ICL_PROMPT_TEMPLATES.get('LongContextPromptTemplate') is LongContextPromptTemplate
    dataset = LVEvalDataset(
        abbr='LVEval_loogle_SD_mixup_16k',
        name='loogle_SD_mixup_16k',
        path=str(tricky_folder),
        reader_cfg=READER,
    )
    task = TASKS_BY_NAME['loogle_SD_mixup']
    template = dict(round=[dict(role='HUMAN', prompt=task.prompt)])
    prompts = {}
    for kind in (LongContextPromptTemplate, PromptTemplate):
        out = tmp_path / kind.__name__
        out.mkdir()
        GenInferencer(model=RandomGuessBaseline(), max_out_len=8, batch_size=2).inference(
            ZeroRetriever(dataset),
            prompt_template=kind(template),
            output_json_filepath=str(out),
            output_json_filename='predictions.json',
        )
        predictions = json.loads((out / 'predictions.json').read_text())
        prompts[kind] = [predictions[str(i)]['origin_prompt'] for i in range(2)]
    first = dataset.test[0]
    official = task.prompt.format(context=first['context'], input=first['input'])
    assert prompts[LongContextPromptTemplate][0] == official
    assert 'Question: What does {context} print?' in official
    assert 'Code: print(f"{idx} {input} {answers}")' in official
    assert prompts[PromptTemplate][0] != official  # the hazard the one-pass template removes
    assert prompts[LongContextPromptTemplate][1] == task.prompt.format(
        context='In Paris.', input='Where?'
    )


def test_the_cut_mark_reaches_the_model_through_the_inferencer(tricky_folder, tmp_path):
    """``cut='context'`` marks where the context landed; OpenCompass's retriever, GenInferencer
    and the wrappers' role parser carry it to what ``generate`` is handed."""
    from opencompass.models.base import BaseModel
    from opencompass.openicl.icl_inferencer import GenInferencer
    from opencompass.openicl.icl_retriever import ZeroRetriever

    from opencompass_lveval.models.template import prompt_parser
    from opencompass_lveval.prompts.prompt_template import LongContextPromptTemplate

    class Recording(BaseModel):
        def __init__(self):
            super().__init__(path='recording')
            self.template_parser, self.seen = prompt_parser(), []

        def get_token_len(self, prompt):
            return 1

        def generate(self, inputs, max_out_len, **kwargs):
            self.seen += inputs
            return ['x'] * len(inputs)

    dataset = LVEvalDataset(
        abbr='LVEval_loogle_SD_mixup_16k',
        name='loogle_SD_mixup_16k',
        path=str(tricky_folder),
        reader_cfg=READER,
    )
    task, model = TASKS_BY_NAME['loogle_SD_mixup'], Recording()
    template = dict(round=[dict(role='HUMAN', prompt=task.prompt)])
    GenInferencer(model=model, max_out_len=8, batch_size=2).inference(
        ZeroRetriever(dataset),
        prompt_template=LongContextPromptTemplate(template, cut='context'),
        output_json_filepath=str(tmp_path),
        output_json_filename='predictions.json',
    )
    for record, (message,) in zip(dataset.test, model.seen):
        start, end = message['cuttable']
        assert message['prompt'] == task.prompt.format(**record)
        assert message['prompt'][start:end] == record['context']


def test_the_cut_mark_reaches_get_ppl_through_the_perplexity_inferencer(tmp_path):
    """TSort perplexity keeps its string template: the filled string carries the span, and
    OpenCompass's PPLInferencer hands it to ``get_ppl`` as it is."""
    from opencompass.models.base import BaseModel
    from opencompass.openicl.icl_inferencer import PPLInferencer
    from opencompass.openicl.icl_retriever import ZeroRetriever
    from opencompass.registry import ICL_PROMPT_TEMPLATES
    from opencompass.utils import build_dataset_from_cfg
    from runs import load_config

    from opencompass_lveval.adaleval.build import write_synthetic
    from opencompass_lveval.adaleval.prompts import TSORT_INSTRUCTION
    from opencompass_lveval.models.template import prompt_parser

    class Recording(BaseModel):
        def __init__(self):
            super().__init__(path='recording')
            self.template_parser, self.seen = prompt_parser(), []

        def get_token_len(self, prompt):
            return 1

        def get_ppl(self, inputs, mask_length=None):
            import numpy as np

            self.seen += inputs
            return np.zeros(len(inputs))

    write_synthetic(tmp_path, count=2)
    configs = load_config('datasets/adaleval/adaleval_tsort_ppl.py').adaleval_tsort_ppl_datasets
    config = next(c for c in configs if c['abbr'] == 'AdaLEval_tsort_ppl_2k')
    config = {**config, 'path': str(tmp_path), 'limit': 2}
    model = Recording()
    PPLInferencer(model=model, batch_size=2).inference(
        ZeroRetriever(build_dataset_from_cfg(config)),
        prompt_template=ICL_PROMPT_TEMPLATES.build(config['infer_cfg']['prompt_template']),
        output_json_filepath=str(tmp_path),
        output_json_filename='predictions.json',
    )
    assert len(model.seen) == 2 * 24
    for text in model.seen:
        start, end = text.cuttable
        assert text[:start] == TSORT_INSTRUCTION and text[end:].startswith('Answer: [')


def test_the_parser_shifts_the_mark_where_the_text_lands():
    from opencompass.utils.prompt import PromptList

    from opencompass_lveval.models.template import prompt_parser

    def rounds(*items):
        return PromptList(
            [{'section': 'round', 'pos': 'begin'}, *items, {'section': 'round', 'pos': 'end'}]
        )

    human = {'role': 'HUMAN', 'prompt': 'Read: ABC. Q?', 'cuttable': (6, 9)}
    assert prompt_parser().parse_template(rounds(human), 'gen') == [
        {'role': 'HUMAN', 'prompt': 'Read: ABC. Q?', 'cuttable': (6, 9)}
    ]
    # A meta template's text before the prompt moves the span with it.
    meta = dict(
        round=[
            dict(role='HUMAN', api_role='HUMAN', begin='<u>', end='</u>'),
            dict(role='BOT', api_role='BOT', generate=True),
        ]
    )
    (message,) = prompt_parser(meta).parse_template(rounds(human), 'gen')
    assert message['prompt'] == '<u>Read: ABC. Q?</u>' and message['cuttable'] == (9, 12)
    # SYSTEM is sent as HUMAN: the two prompts are joined with '\n', the span moves behind.
    system = {'role': 'SYSTEM', 'prompt': 'Be brief.'}
    (message,) = prompt_parser().parse_template(rounds(system, human), 'gen')
    assert message['prompt'] == 'Be brief.\nRead: ABC. Q?' and message['cuttable'] == (16, 19)
    # Two marked prompts in one message: the longest span is kept, the rest protected.
    marked_system = {'role': 'SYSTEM', 'prompt': 'Context: XY.', 'cuttable': (9, 11)}
    (message,) = prompt_parser().parse_template(rounds(marked_system, human), 'gen')
    assert message['prompt'] == 'Context: XY.\nRead: ABC. Q?' and message['cuttable'] == (19, 22)


def test_the_cut_field_must_be_a_field_the_template_uses():
    from opencompass_lveval.prompts.cuttable import MarkedText
    from opencompass_lveval.prompts.prompt_template import LongContextPromptTemplate

    template = dict(round=[dict(role='HUMAN', prompt='Read {context}. {input}')])
    with pytest.raises(ValueError, match=r"cut='contxt' names no field of the record"):
        LongContextPromptTemplate(template, cut='contxt').generate_item(
            {'context': 'c', 'input': 'q'}
        )
    with pytest.raises(ValueError, match=r'never uses \{other\}'):
        LongContextPromptTemplate(template, cut='other').generate_item(
            {'context': 'c', 'input': 'q', 'other': 'o'}
        )
    # A string template gives a str that carries its span, through copies and pickles.
    import copy
    import pickle

    text = LongContextPromptTemplate('Read {context}. {input}', cut='context').generate_item(
        {'context': 'ABC', 'input': 'Q?'}
    )
    assert isinstance(text, MarkedText) and text == 'Read ABC. Q?' and text.cuttable == (5, 8)
    for copied in (copy.deepcopy(text), pickle.loads(pickle.dumps(text))):
        assert isinstance(copied, MarkedText) and copied.cuttable == (5, 8) and copied == text


def test_evaluator_through_opencompass_evaluate(tricky_folder):
    dataset = LVEvalDataset(
        abbr='x', name='loogle_SD_mixup_16k', path=str(tricky_folder), reader_cfg=READER
    )
    test = dataset.test
    evaluator = LVEvalEvaluator(metric='qa_f1_score_with_gold_ans')
    result = evaluator.evaluate(
        1,
        1,
        test,
        predictions=['Charles Babbage', 'paris'],
        references=test['answers'],
        test_set=test,
    )
    assert result['score'] == 50.0  # gate fails on the first, second matches answers[0]
    assert result['diagnostics'] == [
        '1 keyword gate failed, 0 unusable keywords, 0 metric errors, 0 non-string predictions, '
        '2 samples'
    ]
    first, second = result['details']  # OpenCompass lists each field per replica
    assert first['keyword_gate_failed'] == [True] and first['score'] == [0.0]
    assert second['score'] == [1.0] and second['answer'] == ['Paris']


def test_evaluator_rejects_unknown_metric():
    with pytest.raises(ValueError, match='Unknown LV-Eval metric'):
        LVEvalEvaluator(metric='bleu')


def test_eval_config_builds_55_datasets_with_official_prompts(tmp_path, monkeypatch):
    write_synthetic(tmp_path, count=2)
    monkeypatch.setenv('LVEVAL_DATA_DIR', str(tmp_path))
    checks = check_config(str(REPO / 'configs' / 'eval_lveval.py'))
    assert len(checks) == 55
    assert all(c.official_prompt for c in checks), [c.abbr for c in checks if not c.official_prompt]
    assert all(c.records == 2 for c in checks)
    by_abbr = {c.abbr: c for c in checks}
    assert by_abbr['LVEval_factrecall_zh_256k'].max_out_len == 16
    assert by_abbr['LVEval_dureader_mixup_16k'].max_out_len == 64
    assert (
        by_abbr['LVEval_cmrc_mixup_256k'].prompt_chars
        > by_abbr['LVEval_cmrc_mixup_16k'].prompt_chars
    )
