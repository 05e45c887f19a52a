# LV-Eval, all 55 subsets: `opencompass configs/eval_lveval.py` (data in $LVEVAL_DATA_DIR or
# ./data/LVEval; see the README for getting it onto an offline cluster). Edit `models` to choose.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
models = [m for m in vllm_paper_models if m['abbr'] == 'chatglm3-6b-32k-vllm']
work_dir = 'outputs/lveval'
# One inference task per model (raise num_worker and max_num_workers with more GPUs). Before any
# task starts, every model is checked against every dataset (model folder, tokenizer, format,
# window) and every data file is looked up: a problem stops the run there, as does a model asking
# for more GPUs than this machine has. Evaluation skips (and names) what has no predictions.
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(type=CheckedLocalRunner, max_num_workers=1, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=11),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
