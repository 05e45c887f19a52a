# LV-Eval: 11 datasets x 5 length levels = 55 OpenCompass datasets, from the package's task table.
# Official prompts (byte-identical), official max_out_len, greedy decoding (the model's default).
# Data folder: $LVEVAL_DATA_DIR, else ./data/LVEval; it may hold the official zips or .jsonl files.
# Each config: LVEvalDataset, LongContextPromptTemplate (a middle cut shortens the context only),
# GenInferencer, LVEvalEvaluator (the benchmark's `cell_config`, lveval/benchmark.py).
# Levels made with `lveval build` (512k, 1000k, ...) take one line in your config, e.g.
#   lveval_datasets += __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])\
#       .named('lveval').at_sizes(lveval_datasets, ['512k', '1000k'], tasks=['factrecall_en'])

# `__import__`, not an import statement: the lazy config parser would turn the function into a
# placeholder that cannot be called.
lveval_datasets = (
    __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('lveval')
    .configs()
)
