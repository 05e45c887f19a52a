# LV-Eval: 11 datasets x 5 length levels = 55 OpenCompass datasets, from the package's task table.
# Official prompts (byte-identical), official max_out_len, greedy decoding (the model's default).
# Data folder: $LVEVAL_DATA_DIR, else ./data/LVEval; it may hold the official zips or .jsonl files.
# Each config: LVEvalDataset, LongContextPromptTemplate (a middle cut shortens the context only),
# GenInferencer, LVEvalEvaluator (opencompass_lveval.lveval.entries.dataset_configs).
# Levels made with `lveval build` (512k, 1000k, ...) take one line in your config, e.g.
#   lveval_datasets += __import__('opencompass_lveval.lveval.entries', fromlist=['at_levels'])\
#       .at_levels(lveval_datasets, ['512k', '1000k'], datasets=['factrecall_en'])

# `__import__`, not an import statement: the lazy config parser would turn the function into a
# placeholder that cannot be called.
_entries = __import__('opencompass_lveval.lveval.entries', fromlist=['lveval_entries'])
lveval_datasets = _entries.dataset_configs(_entries.lveval_entries())
del _entries
