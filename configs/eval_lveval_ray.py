# LV-Eval on a Ray cluster: `RAY_ADDRESS=HEAD:6379 opencompass configs/eval_lveval_ray.py`
# Inference: one task per (model, group of datasets), each a Ray task holding its model's
# run_cfg.num_gpus GPUs on one node (Ray sets CUDA_VISIBLE_DEVICES): 4 for qwen2.5-72b-instruct-128k
# and llama-3.1-70b-instruct-128k (tensor parallelism 4), 1 for every other paper model.
# Evaluation: CPU only. A task asking for more GPUs than any node offers is refused before it
# reaches the cluster, with the reason in its log and in `lveval leaderboard`. Each attempt may
# run `deadline_s` (a day here: a 256k level of a 70B model takes hours); a task whose node dies
# or goes silent past it runs again on another node, up to `retry` more times. Every node needs
# this Python environment and the folder you run in at the same path (a shared file system).
# Inside a Slurm allocation, start Ray first (README: "Ray inside a Slurm allocation").
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.prelaunch import CheckedPartitioner
from opencompass_lveval.runner.ray_runner import RayRunner

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
models = vllm_paper_models
work_dir = 'outputs/lveval_ray'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=8),
    runner=dict(
        type=RayRunner,
        max_num_workers=32,
        retry=2,
        deadline_s=86400,
        task=dict(type=LongContextInferTask),
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=11),
    runner=dict(
        type=RayRunner,
        max_num_workers=16,
        retry=2,
        deadline_s=7200,
        task=dict(type=OpenICLEvalTask),
    ),
)
