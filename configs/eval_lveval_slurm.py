# LV-Eval on a Slurm cluster: `opencompass configs/eval_lveval_slurm.py`
# Inference: one task per (model, group of datasets), each asking Slurm for the model's
# run_cfg.num_gpus GPUs (4 for 70B-class models) on the GPU partition; evaluation on CPU nodes.
# Set the partitions below (or pass `-p PARTITION` with `--slurm` to use OpenCompass's defaults).
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner, NumWorkerPartitioner
from opencompass.runners import SlurmRunner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
models = vllm_paper_models
work_dir = 'outputs/lveval_slurm'
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=8),
    runner=dict(
        type=SlurmRunner,
        partition='gpu',
        max_num_workers=32,
        retry=2,
        task=dict(type=LongContextInferTask),
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=11),
    runner=dict(
        type=SlurmRunner,
        partition='cpu',
        max_num_workers=16,
        retry=1,
        task=dict(type=OpenICLEvalTask),
    ),
)
