# Ada-LEval on a Ray cluster: `RAY_ADDRESS=HEAD:6379 opencompass configs/eval_adaleval_ray.py`
# (data in $ADALEVAL_DATA_DIR or ./data/AdaLEval, on the shared file system), with the runner
# settings of configs/eval_lveval_ray.py: inference tasks hold their model's run_cfg.num_gpus GPUs
# on one node, evaluation runs on CPU, a lost node or a silent one past the deadline costs a retry
# on another node. Every node needs this Python environment and the run's folder at the same path.
from mmengine.config import read_base

with read_base():
    from .datasets.adaleval.adaleval_gen import adaleval_datasets
    from .eval_lveval_ray import eval, infer, models
    from .summarizers.adaleval import summarizer

datasets = adaleval_datasets
work_dir = 'outputs/adaleval_ray'
