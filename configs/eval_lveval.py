# LV-Eval, all 55 subsets: `opencompass configs/eval_lveval.py` (data in $LVEVAL_DATA_DIR or
# ./data/LVEval; see the README for getting it onto an offline cluster). Edit `models` to choose.
from mmengine.config import read_base
from opencompass.partitioners import NumWorkerPartitioner
from opencompass.runners import LocalRunner

from opencompass_lveval.runner.infer_task import LongContextInferTask

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
models = [m for m in vllm_paper_models if m['abbr'] == 'chatglm3-6b-32k-vllm']
work_dir = 'outputs/lveval'
# One inference task per model (raise num_worker and max_num_workers with more GPUs); each task
# checks every model against every dataset (model folder, tokenizer, format, window) before any
# weights load.
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=1),
    runner=dict(type=LocalRunner, max_num_workers=1, task=dict(type=LongContextInferTask)),
)
