# The demo on a Ray cluster: `RAY_ADDRESS=HEAD:6379 opencompass configs/eval_demo_ray.py`
# The same datasets, models and summary as configs/eval_demo.py (`lveval data synth data/demo`
# first), each task run on a node of the cluster by the package's RayRunner. Every node needs this
# Python environment and the folder you run in at the same path (a shared file system); the first
# task on each node checks both. Each attempt has a deadline (deadline_s); a task whose node dies
# or passes it runs again on another node, up to `retry` more times. Where each task ran is kept
# in the run folder, logs/ray_runner.jsonl.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.prelaunch import CheckedPartitioner
from opencompass_lveval.runner.ray_runner import RayRunner

with read_base():
    from .eval_demo import datasets, models, summarizer

work_dir = 'outputs/demo_ray'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(
        type=RayRunner,
        max_num_workers=8,
        retry=2,
        deadline_s=600,
        task=dict(type=LongContextInferTask),
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(datasets)),
    runner=dict(
        type=RayRunner, max_num_workers=8, retry=2, deadline_s=600, task=dict(type=OpenICLEvalTask)
    ),
)
