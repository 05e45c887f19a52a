# The README's first command: the CPU baselines on small generated data, through OpenCompass.
#   lveval data synth data/demo && opencompass configs/eval_demo.py
# Every registered benchmark's demo datasets (Benchmark.demo_datasets: LV-Eval at every length
# level, 4 records per subset; Ada-LEval BestAnswer 1k/2k and TSort 2k/4k, 10 records each; RULER's
# 13 tasks at 4k, 4 records each; LongBench v2's 4 settings x 3 lengths, 12 records; MRCR's 6 tasks
# at the 8k bin, 4 rows each); one inference and one evaluation task per model, about a minute.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.report.summarizer import LongContextSummarizer
from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

with read_base():
    from .models.cpu_baselines import models

# `__import__`: the lazy config parser leaves it alone, so its functions can be called here.
_benchmarks = __import__('opencompass_lveval.framework.benchmarks', fromlist=['demo_datasets'])
datasets = _benchmarks.demo_datasets('data/demo')  # written by `lveval data synth data/demo`
summarizer = dict(
    type=LongContextSummarizer,
    **_benchmarks.demo_summarizer([dataset['abbr'] for dataset in datasets]),
)
work_dir = 'outputs/demo'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(datasets)),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
del _benchmarks
