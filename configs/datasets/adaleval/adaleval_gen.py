# Ada-LEval: BestAnswer (1k-128k) and TSort (2k-128k), the official prompts and sample counts
# (1000 below 32k, 200 from 32k; `configs(cheap=True)` for 200 / 50), strict answer extraction
# (`configs(extraction='official')` reproduces the official code). Data: $ADALEVAL_DATA_DIR or
# ./data/AdaLEval, the official stackselect_*.json / textsort_*.json at any depth.
# Each config: AdaLEvalDataset, LongContextPromptTemplate (a middle cut shortens the body only),
# GenInferencer, AdaLEvalEvaluator (the benchmark's `cell_config`, adaleval/benchmark.py).
# Settings made with `lveval build` (256k, ...) take one line in your config, e.g.
#   adaleval_datasets += __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])\
#       .named('adaleval').at_sizes(adaleval_datasets, ['256k'], tasks=['bestanswer'])
adaleval_datasets = (
    __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('adaleval')
    .configs()
)
