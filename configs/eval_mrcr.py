# MRCR, both versions: `opencompass configs/eval_mrcr.py` (openai/mrcr parquet files in
# data/mrcr/openai, download.sh's MRCR v2 files in data/mrcr/v2; docs/mrcr.md says how to get them
# offline). Each prompt is a conversation, cut by whole early turns where it overflows the
# window; each version graded by its own grader; the report adds GDM's cells (MRCR v2, 8 needles,
# upto_128K and at_1M: add the `1m` level where your model's window holds it). Edit `models`
# (models/mrcr_api.py: gpt-4.1 as openai/mrcr's card calls it).
from mmengine.config import read_base

from opencompass_lveval.report.summarizer import LongContextSummarizer

with read_base():
    from .datasets.mrcr.mrcr_gen import mrcr_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .runners.local import eval, infer

_benchmark = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named('mrcr')
datasets = mrcr_datasets
models = [m for m in vllm_paper_models if m['abbr'] == 'glm-4-9b-chat-128k-vllm']
summarizer = dict(type=LongContextSummarizer, **_benchmark.summary_config(datasets))
work_dir = 'outputs/mrcr'
del _benchmark
