# The demo on the Slurm cluster that `sinfo` shows: `opencompass configs/eval_demo_slurm.py`
# The same datasets, models and summary as configs/eval_demo.py (`lveval data synth data/demo`
# first), each task a Slurm job (`srun`) of the package's CheckedSlurmRunner, on the partition
# named by $LVEVAL_SLURM_PARTITION, else the cluster's default one. Every node needs this Python
# environment and the folder you run in at the same path (a shared file system). A failed job is
# submitted again up to `retry` times; a task asking for more GPUs than a node offers is refused
# before submission, with the reason in its log.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.prelaunch import CheckedPartitioner
from opencompass_lveval.runner.slurm import CheckedSlurmRunner

with read_base():
    from .eval_demo import datasets, models, summarizer

work_dir = 'outputs/demo_slurm'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(
        type=CheckedSlurmRunner, max_num_workers=8, retry=2, task=dict(type=LongContextInferTask)
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(datasets)),
    runner=dict(
        type=CheckedSlurmRunner, max_num_workers=8, retry=2, task=dict(type=OpenICLEvalTask)
    ),
)
