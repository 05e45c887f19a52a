# TSort in perplexity mode (the paper's ablation): each of the 24 orders is appended to the prompt
# as "Answer: [a, b, c, d]" and the model's lowest-perplexity order is its answer. Needs a model
# with get_ppl (LongContextHF; chat templates are not applied when scoring).
from opencompass.openicl.icl_inferencer import PPLInferencer
from opencompass.openicl.icl_retriever import ZeroRetriever

from opencompass_lveval.adaleval.dataset import AdaLEvalDataset
from opencompass_lveval.adaleval.evaluator import AdaLEvalEvaluator
from opencompass_lveval.prompts.prompt_template import LongContextPromptTemplate

_adaleval = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named(
    'adaleval'
)
_orders = __import__('opencompass_lveval.adaleval.tasks', fromlist=['TSORT_ORDERS']).TSORT_ORDERS

adaleval_tsort_ppl_datasets = [
    dict(
        type=AdaLEvalDataset,
        abbr=plain['abbr'].replace('tsort', 'tsort_ppl'),
        task='tsort',
        setting=plain['setting'],
        path=plain['path'],
        cheap=plain['cheap'],
        reader_cfg=dict(input_columns=['instruction', 'body', 'closing'], output_column='answer'),
        infer_cfg=dict(
            # The official prompt and an order; a middle cut (a window too small for the prompt)
            # may shorten the book parts only, never the instruction or the order scored.
            prompt_template=dict(
                type=LongContextPromptTemplate,
                template={
                    order: '{instruction}{body}{closing}Answer: ' + order for order in _orders
                },
                cut='body',
            ),
            retriever=dict(type=ZeroRetriever),
            inferencer=dict(type=PPLInferencer),
        ),
        eval_cfg=dict(evaluator=dict(type=AdaLEvalEvaluator, task='tsort')),
    )
    for plain in _adaleval.configs(tasks=['tsort'])
]
del _adaleval, _orders
