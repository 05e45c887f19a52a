# Ada-LEval on a Ray cluster: `RAY_ADDRESS=HEAD:6379 opencompass configs/eval_adaleval_ray.py`
# (data in $ADALEVAL_DATA_DIR or ./data/AdaLEval, on the shared file system). The runner settings
# of configs/eval_lveval_ray.py: inference tasks hold their model's run_cfg.num_gpus GPUs on one
# node, evaluation runs on CPU, a lost node or a silent one past the deadline costs a retry on
# another node. Every node needs this Python environment and the run's folder at the same path.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner, NumWorkerPartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.ray_runner import RayRunner

with read_base():
    from .datasets.adaleval.adaleval_gen import adaleval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.adaleval import summarizer

datasets = adaleval_datasets
models = vllm_paper_models
work_dir = 'outputs/adaleval_ray'
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=4),
    runner=dict(
        type=RayRunner,
        max_num_workers=32,
        retry=2,
        deadline_s=86400,
        task=dict(type=LongContextInferTask),
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=4),
    runner=dict(
        type=RayRunner,
        max_num_workers=16,
        retry=2,
        deadline_s=7200,
        task=dict(type=OpenICLEvalTask),
    ),
)
