# LV-Eval: 11 datasets x 5 length levels = 55 OpenCompass datasets, from the package's task table.
# Official prompts (byte-identical), official max_out_len, greedy decoding (the model's default).
# Data folder: $LVEVAL_DATA_DIR, else ./data/LVEval; it may hold the official zips or .jsonl files.
# Levels made with `lveval build` (512k, 1000k, ...) take one line in your config, e.g.
#   lveval_datasets += __import__('opencompass_lveval.lveval.entries', fromlist=['at_levels'])\
#       .at_levels(lveval_datasets, ['512k', '1000k'], datasets=['factrecall_en'])
from opencompass.openicl.icl_inferencer import GenInferencer
from opencompass.openicl.icl_retriever import ZeroRetriever

from opencompass_lveval.lveval.dataset import LVEvalDataset
from opencompass_lveval.lveval.evaluator import LVEvalEvaluator
from opencompass_lveval.prompt_template import LongContextPromptTemplate

# `__import__`, not an import statement: the lazy config parser would turn the function into a
# placeholder that cannot be called.
_entries = __import__('opencompass_lveval.lveval.entries', fromlist=['lveval_entries'])

lveval_datasets = [
    dict(
        type=LVEvalDataset,
        abbr=entry['abbr'],
        name=entry['name'],
        path=entry['path'],
        reader_cfg=dict(
            input_columns=['context', 'input'],
            output_column='answers',
            train_split='test',
            test_split='test',
        ),
        infer_cfg=dict(
            # Fills {context} and {input} in one pass: text inside a field stays as it is. A
            # middle cut may shorten the context only; the instructions and question are kept.
            prompt_template=dict(
                type=LongContextPromptTemplate,
                template=dict(round=[dict(role='HUMAN', prompt=entry['prompt'])]),
                cut='context',
            ),
            retriever=dict(type=ZeroRetriever),
            inferencer=dict(type=GenInferencer, max_out_len=entry['max_out_len']),
        ),
        eval_cfg=dict(
            evaluator=dict(type=LVEvalEvaluator, metric=entry['metric']), pred_role='BOT'
        ),
    )
    for entry in _entries.lveval_entries()
]
del _entries
