# The README's first command: the CPU baselines on small generated data at every LV-Eval level.
#   lveval data synth data/demo && LVEVAL_DATA_DIR=data/demo opencompass configs/eval_demo.py
# One inference task and one evaluation task per model, so the run takes about a minute on 2 cores.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner, NumWorkerPartitioner
from opencompass.runners import LocalRunner
from opencompass.tasks import OpenICLEvalTask, OpenICLInferTask

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.cpu_baselines import models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
work_dir = 'outputs/demo'
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=1),
    runner=dict(type=LocalRunner, max_num_workers=2, task=dict(type=OpenICLInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(lveval_datasets)),
    runner=dict(type=LocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
