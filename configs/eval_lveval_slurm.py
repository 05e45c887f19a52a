# LV-Eval on a Slurm cluster: `opencompass configs/eval_lveval_slurm.py`
# Inference: one task per (model, group of datasets) on the `gpu` partition, each asking Slurm for
# its model's run_cfg.num_gpus GPUs (`srun --gres=gpu:N`, visible to the task as
# CUDA_VISIBLE_DEVICES). From the paper-model table: 4 GPUs for qwen2.5-72b-instruct-128k and
# llama-3.1-70b-instruct-128k (tensor parallelism 4, 80 GB each), 1 for every other model.
# Evaluation: CPU only, on the `cpu` partition. A task asking for more GPUs than a node of its
# partition offers (per `sinfo`) is refused before submission, with the reason in its log file
# and in `lveval leaderboard`, instead of failing in Slurm three times. Before any job is
# submitted, the driver checks every model (folder, tokenizer, window) and reads every data file
# (where it runs: the login node must see the model and data folders); evaluation is not
# submitted for what has no predictions.
# Set the partition names below; afterwards
# `lveval leaderboard outputs/lveval_slurm --out board --strict`
# fails if any result is missing.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.prelaunch import CheckedPartitioner
from opencompass_lveval.runner.slurm import CheckedSlurmRunner

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
models = vllm_paper_models
work_dir = 'outputs/lveval_slurm'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=8),
    runner=dict(
        type=CheckedSlurmRunner,
        partition='gpu',
        max_num_workers=32,
        retry=2,
        task=dict(type=LongContextInferTask),
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=11),
    runner=dict(
        type=CheckedSlurmRunner,
        partition='cpu',
        max_num_workers=16,
        retry=1,
        task=dict(type=OpenICLEvalTask),
    ),
)
