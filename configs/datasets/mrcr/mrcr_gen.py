# MRCR, both versions: OpenAI MRCR (openai/mrcr parquet files under data/mrcr/openai, bins by
# o200k_base tokens, 8k to 1m) and MRCR v2 (download.sh's CSV files under data/mrcr/v2, 8k to 8m
# and the cumulative upto128k), at 2, 4 and 8 needles: every cell whose file is present must be
# there, so pick the levels your models' windows hold, e.g.
#   named('mrcr').configs(sizes=['8k', '16k', '32k', '64k', '128k'])
# Each config: MRCRDataset (the prompt as chat messages; a cut drops whole early turns),
# GenInferencer (1024 answer tokens), MRCREvaluator (the version's official grader).
# `configs(tokens='cl100k_base')` bins OpenAI MRCR where o200k_base is not in tiktoken's cache.
mrcr_datasets = (
    __import__('opencompass_lveval.framework.benchmarks', fromlist=['named'])
    .named('mrcr')
    .configs(sizes=['8k', '16k', '32k', '64k', '128k'])
)
