# Ada-LEval: BestAnswer (1k-128k) and TSort (2k-128k), the official prompts and sample counts
# (1000 below 32k, 200 from 32k; `cheap=True` in adaleval_entries for 200 / 50), strict answer
# extraction (`extraction='official'` reproduces the official code). Data: $ADALEVAL_DATA_DIR or
# ./data/AdaLEval, the official stackselect_*.json / textsort_*.json at any depth.
from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_retriever import ZeroRetriever

from opencompass_lveval.adaleval.dataset import AdaLEvalDataset
from opencompass_lveval.adaleval.evaluator import AdaLEvalEvaluator

_configs = __import__('opencompass_lveval.configs', fromlist=['adaleval_entries'])


def _dataset(entry):
    return dict(
        type=AdaLEvalDataset, abbr=entry['abbr'], task=entry['task'], setting=entry['setting'],
        path=entry['path'], cheap=entry['cheap'], position=entry['position'],
        reader_cfg=dict(input_columns=['prompt'], output_column='answer'),
        infer_cfg=dict(
            prompt_template=dict(type=PromptTemplate,
                                 template=dict(round=[dict(role='HUMAN', prompt='{prompt}')])),
            retriever=dict(type=ZeroRetriever),
            inferencer=dict(type=GenInferencer, max_out_len=entry['max_out_len']),
        ),
        eval_cfg=dict(evaluator=dict(type=AdaLEvalEvaluator, task=entry['task'],
                                     extraction=entry['extraction']), pred_role='BOT'),
    )


adaleval_datasets = [_dataset(entry) for entry in _configs.adaleval_entries()]
# BestAnswer with the accepted answer moved to the front, middle or rear (position bias).
adaleval_position_bias_datasets = [
    _dataset(entry) for position in ('front', 'middle', 'rear')
    for entry in _configs.adaleval_entries(tasks=['bestanswer'], position=position)]
del _configs, _dataset
