# Ada-LEval: BestAnswer (1k-128k) and TSort (2k-128k), the official prompts and sample counts
# (1000 below 32k, 200 from 32k; `cheap=True` in adaleval_entries for 200 / 50), strict answer
# extraction (`extraction='official'` reproduces the official code). Data: $ADALEVAL_DATA_DIR or
# ./data/AdaLEval, the official stackselect_*.json / textsort_*.json at any depth.
# Each config: AdaLEvalDataset, LongContextPromptTemplate (a middle cut shortens the body only),
# GenInferencer, AdaLEvalEvaluator (opencompass_lveval.adaleval.entries.dataset_configs).
# Settings made with `lveval build` (256k, ...) take one line in your config, e.g.
#   adaleval_datasets += __import__('opencompass_lveval.adaleval.entries',
#       fromlist=['at_settings']).at_settings(adaleval_datasets, ['256k'], tasks=['bestanswer'])
_entries = __import__('opencompass_lveval.adaleval.entries', fromlist=['adaleval_entries'])
adaleval_datasets = _entries.dataset_configs(_entries.adaleval_entries())
del _entries
