# Ada-LEval, both tasks at every setting: `opencompass configs/eval_adaleval.py`
# (data in $ADALEVAL_DATA_DIR or ./data/AdaLEval). Edit `models`; for the paper's ablations add
# datasets/adaleval/adaleval_position_bias.py or adaleval_tsort_ppl.py.
from mmengine.config import read_base
from opencompass.partitioners import NumWorkerPartitioner
from opencompass.runners import LocalRunner

from opencompass_lveval.runner.infer_task import LongContextInferTask

with read_base():
    from .datasets.adaleval.adaleval_gen import adaleval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.adaleval import summarizer

datasets = adaleval_datasets
models = [m for m in vllm_paper_models if m['abbr'] == 'chatglm3-6b-32k-vllm']
work_dir = 'outputs/adaleval'
# One inference task per model (raise num_worker and max_num_workers with more GPUs); each task
# checks every model against every dataset (model folder, tokenizer, format, window) before any
# weights load.
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=1),
    runner=dict(type=LocalRunner, max_num_workers=1, task=dict(type=LongContextInferTask)),
)
