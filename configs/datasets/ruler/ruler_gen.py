# RULER: its 13 tasks at 4k-128k tokens, read from one folder `lveval build ruler` wrote
# (<tokens>/<task>/validation.jsonl, built with ONE model's tokenizer; $RULER_DATA_DIR or
# ./data/ruler): for API models and the CPU baselines. For models of your own, data built per
# model with its tokenizer before any task starts, see configs/eval_ruler.py (model_configs).
# Each config: DeclaredDataset (input + answer prefix, as pred/call_api.py sends it; a middle cut
# shortens the input only), GenInferencer with the task's tokens to generate, DeclaredEvaluator
# (the task's official metric, its score as evaluate.py rounds it). Other lengths, one line:
#   ruler_datasets += __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])\
#       .named('ruler').at_sizes(ruler_datasets, ['256k'])
ruler_datasets = (
    __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('ruler')
    .configs()
)
