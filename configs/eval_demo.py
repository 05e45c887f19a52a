# The README's first command: the CPU baselines on small generated data, through OpenCompass.
#   lveval data synth data/demo && opencompass configs/eval_demo.py
# LV-Eval at every length level (4 records per subset) and Ada-LEval BestAnswer 1k/2k and TSort
# 2k/4k (10 records each); one inference and one evaluation task per model, about a minute.
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner, NumWorkerPartitioner
from opencompass.runners import LocalRunner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask

with read_base():
    from .datasets.adaleval.adaleval_gen import adaleval_datasets
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.cpu_baselines import models
    from .summarizers.lveval import summarizer as lveval_summarizer

_entries = __import__('opencompass_lveval.adaleval.entries', fromlist=['adaleval_summary_abbrs'])
_demo = (
    'AdaLEval_bestanswer_1k',
    'AdaLEval_bestanswer_2k',
    'AdaLEval_tsort_2k',
    'AdaLEval_tsort_4k',
)
datasets = lveval_datasets + [d for d in adaleval_datasets if d['abbr'] in _demo]
for _dataset in datasets:
    _dataset['path'] = 'data/demo'  # written by `lveval data synth data/demo`
    if 'setting' in _dataset:  # Ada-LEval: 10 synthetic records where the papers use 1000
        _dataset['limit'] = 10
summarizer = dict(
    type=lveval_summarizer['type'],
    dataset_abbrs=(
        lveval_summarizer['dataset_abbrs'][:6]
        + _entries.adaleval_summary_abbrs([d['abbr'] for d in datasets])
        + lveval_summarizer['dataset_abbrs'][6:]
    ),
    summary_groups=(
        lveval_summarizer['summary_groups']
        + _entries.adaleval_summary_groups([d['abbr'] for d in datasets])
    ),
)
work_dir = 'outputs/demo'
infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=1),
    runner=dict(type=LocalRunner, max_num_workers=2, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(datasets)),
    runner=dict(type=LocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
del _entries, _dataset, _demo
