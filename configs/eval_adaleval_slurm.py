# Ada-LEval on a Slurm cluster: `opencompass configs/eval_adaleval_slurm.py`
# (data in $ADALEVAL_DATA_DIR or ./data/AdaLEval, on the shared file system). The runner settings
# of configs/eval_lveval_slurm.py: inference jobs on the `gpu` partition with their model's
# run_cfg.num_gpus GPUs (`srun --gres=gpu:N`), evaluation on `cpu`; a task asking for more GPUs
# than a node of its partition offers (per `sinfo`) is refused before submission, with the reason
# in its log and in `lveval leaderboard`. Set the partition names below.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner, NumWorkerPartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.slurm import CheckedSlurmRunner

with read_base():
    from .datasets.adaleval.adaleval_gen import adaleval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.adaleval import summarizer

datasets = adaleval_datasets
models = vllm_paper_models
work_dir = 'outputs/adaleval_slurm'
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=4),
    runner=dict(
        type=CheckedSlurmRunner,
        partition='gpu',
        max_num_workers=32,
        retry=2,
        task=dict(type=LongContextInferTask),
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=4),
    runner=dict(
        type=CheckedSlurmRunner,
        partition='cpu',
        max_num_workers=16,
        retry=1,
        task=dict(type=OpenICLEvalTask),
    ),
)
