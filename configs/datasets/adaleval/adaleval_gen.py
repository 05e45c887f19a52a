# Ada-LEval: BestAnswer (1k-128k) and TSort (2k-128k), the official prompts and sample counts
# (1000 below 32k, 200 from 32k; `cheap=True` in adaleval_entries for 200 / 50), strict answer
# extraction (`extraction='official'` reproduces the official code). Data: $ADALEVAL_DATA_DIR or
# ./data/AdaLEval, the official stackselect_*.json / textsort_*.json at any depth.
# Settings made with `lveval build` (256k, ...) take one line in your config, e.g.
#   adaleval_datasets += __import__('opencompass_lveval.adaleval.entries',
#       fromlist=['at_settings']).at_settings(adaleval_datasets, ['256k'], tasks=['bestanswer'])
from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.openicl.icl_retriever import ZeroRetriever

from opencompass_lveval.adaleval.dataset import AdaLEvalDataset
from opencompass_lveval.adaleval.evaluator import AdaLEvalEvaluator
from opencompass_lveval.prompt_template import LongContextPromptTemplate

_entries = __import__('opencompass_lveval.adaleval.entries', fromlist=['adaleval_entries'])

adaleval_datasets = [
    dict(
        type=AdaLEvalDataset,
        abbr=entry['abbr'],
        task=entry['task'],
        setting=entry['setting'],
        path=entry['path'],
        cheap=entry['cheap'],
        position=entry['position'],
        reader_cfg=dict(input_columns=['instruction', 'body', 'closing'], output_column='answer'),
        infer_cfg=dict(
            # The official prompt, joined from its parts; a middle cut may shorten the body only
            # (the question and answers, or the book parts), never the instructions around it.
            prompt_template=dict(
                type=LongContextPromptTemplate,
                template=dict(round=[dict(role='HUMAN', prompt='{instruction}{body}{closing}')]),
                cut='body',
            ),
            retriever=dict(type=ZeroRetriever),
            inferencer=dict(type=GenInferencer, max_out_len=entry['max_out_len']),
        ),
        eval_cfg=dict(
            evaluator=dict(
                type=AdaLEvalEvaluator, task=entry['task'], extraction=entry['extraction']
            ),
            pred_role='BOT',
        ),
    )
    for entry in _entries.adaleval_entries()
]
del _entries
