# LongBench v2 as its authors ran it: `opencompass configs/eval_longbench_v2.py` (data.json in
# data/longbenchv2; docs/longbench_v2.md says how to get it offline). pred.py's settings and
# result.py's table: official fill and empty replies dropped (mode='official'), requests cut and
# sent as pred.py sends them (models/longbench_v2_api.py: a vLLM server on 127.0.0.1:8000 for the
# open-weight rows). Edit `models`; `lveval report` adds result.py's table (Overall, Easy, Hard,
# Short, Medium, Long) per model and setting. For this package's own cut and fill, use
# `configs()` (mode='default') and any model here (LongContextVLLM, LongContextHF, API).
from mmengine.config import read_base

from opencompass_lveval.report.summarizer import LongContextSummarizer

with read_base():
    from .models.longbench_v2_api import longbench_v2_api_models
    from .runners.local import eval, infer

_benchmark = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named(
    'longbench_v2'
)
datasets = _benchmark.configs(mode='official')
models = [m for m in longbench_v2_api_models if m['abbr'] == 'Llama-3.1-8B-Instruct-longbench-v2']
summarizer = dict(type=LongContextSummarizer, **_benchmark.summary_config(datasets))
work_dir = 'outputs/longbench_v2'
del _benchmark
