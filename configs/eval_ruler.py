# RULER, 13 tasks at 4k-128k tokens of each model's own tokenizer: `opencompass configs/eval_ruler.py`
# with RULER's inputs in $RULER_INPUTS (default ./data/ruler_inputs: PaulGrahamEssays.json,
# squad.json, hotpotqa.json, english_words.json, nltk_data/; docs/ruler.md, "Inputs"). Edit
# `models` to choose (default Llama-3-8B-Instruct-Gradient-1048k, one GPU).
#
# Each model reads data built with its own tokenizer (tokenizer_path, else path) at the lengths
# its window (max_seq_len) holds: `model_configs` gives the datasets and OpenCompass's
# model_dataset_combinations that pair them. Before any task starts, the run's driver
# (CheckedPartitioner) builds what is missing, in parallel processes with a progress bar, once
# per tokenizer: cached in $RULER_DATA_DIR (default ./data/ruler) by tokenizer fingerprint,
# template, seed and count, each file by task and length, and reused by later runs and by other
# models sharing the tokenizer. The official runs' settings: 500 samples, seed 42, the base
# template (the model's chat template is applied by its wrapper, as for API models in run.sh).
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.report.summarizer import LongContextSummarizer
from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

with read_base():
    from .models.vllm_paper_models import vllm_paper_models

# The papers' models RULER can build data for (tokenizers without code of their own), e.g.
# llama2-7b-chat-4k, llama3-8b-instruct-8k, vicuna-7b-v1.5-16k, longchat-7b-v1.5-32k,
# qwen2.5-72b-instruct-128k, llama-3.1-70b-instruct-128k, yi-6b-200k.
models = [m for m in vllm_paper_models if m['abbr'] == 'llama3-8b-instruct-1m-vllm']
# `__import__`: the lazy config parser leaves it alone; nothing of it stays in the config.
_ruler = __import__('opencompass_lveval.framework.benchmarks', fromlist=['named']).named('ruler')
datasets, model_dataset_combinations = _ruler.model_configs(
    models,
    sizes=['4k', '8k', '16k', '32k', '64k', '128k'],  # any Nk or Nm: '256k', '1m'
    inputs=__import__('os').environ.get('RULER_INPUTS', 'data/ruler_inputs'),
    seed=42,
    count=500,
)
summarizer = dict(type=LongContextSummarizer, **_ruler.summary_config(datasets))
work_dir = 'outputs/ruler'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(type=CheckedLocalRunner, max_num_workers=1, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=13),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
del _ruler
