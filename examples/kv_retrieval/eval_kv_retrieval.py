# KV retrieval with the CPU baselines, through OpenCompass:
#   lveval data synth data/demo && opencompass examples/kv_retrieval/eval_kv_retrieval.py
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.report.summarizer import LongContextSummarizer
from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

with read_base():
    from opencompass_lveval.configs.models.cpu_baselines import models  # noqa: F401

_kv = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named(
    'kv_retrieval'
)
datasets = _kv.configs('data/demo/kv_retrieval')
summarizer = dict(type=LongContextSummarizer, **_kv.summary_config(datasets))
work_dir = 'outputs/kv_retrieval'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(datasets)),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
del _kv
