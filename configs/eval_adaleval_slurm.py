# Ada-LEval on a Slurm cluster: `opencompass configs/eval_adaleval_slurm.py`
# (data in $ADALEVAL_DATA_DIR or ./data/AdaLEval, on the shared file system), with the runner
# settings of configs/eval_lveval_slurm.py: inference jobs on the `gpu` partition with their
# model's run_cfg.num_gpus GPUs (`srun --gres=gpu:N`), evaluation on `cpu`; a task asking for more
# GPUs than a node of its partition offers (per `sinfo`) is refused before submission, with the
# reason in its log and in `lveval leaderboard`. The partition names are set there.
from mmengine.config import read_base

with read_base():
    from .datasets.adaleval.adaleval_gen import adaleval_datasets
    from .eval_lveval_slurm import eval, infer, models
    from .summarizers.adaleval import summarizer

datasets = adaleval_datasets
work_dir = 'outputs/adaleval_slurm'
