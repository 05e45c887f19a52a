# Models behind an OpenAI-compatible API: `opencompass configs/eval_api.py`.
# By default the Ada-LEval paper's API rows on its cheap subsets (200 / 50 samples); for
# LV-Eval's GPT rows use `models = lveval_api_models` and `datasets = lveval_datasets`.
# A served open-weight model (`vllm serve`, SGLang, LMDeploy, `transformers serve`) is one dict:
#   dict(type=LongContextAPI, abbr='my-model', path='MODEL_ID', url='http://HOST:PORT/v1',
#        tokenizer_path='/models/my-model', max_seq_len=131072, prompt_ids=True,
#        max_out_len=64, batch_size=16, concurrency=16, run_cfg=dict(num_gpus=0))
# (`prompt_ids=True` sends the exact ids of the offline wrappers; vLLM and SGLang take them.)
# Replies are cached in the work folder: a killed run resumed with `-r` pays only for the rest.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.models import LongContextAPI  # noqa: F401 (for the example above)
from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

with read_base():
    from .datasets.adaleval.adaleval_gen import adaleval_datasets
    from .datasets.lveval.lveval_gen import lveval_datasets  # noqa: F401
    from .models.api_paper_models import adaleval_api_models, lveval_api_models  # noqa: F401
    from .summarizers.adaleval import summarizer

datasets = adaleval_datasets
for _dataset in datasets:
    _dataset['cheap'] = True  # the papers ran API models on 200 / 50 samples
models = adaleval_api_models
work_dir = 'outputs/api'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(type=CheckedLocalRunner, max_num_workers=4, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=8),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
del _dataset
