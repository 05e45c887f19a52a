# The package's stages on one machine, for a config of your own:
#   with read_base():
#       from opencompass_lveval.configs.runners.local import eval, infer
# Before any task starts, every model is checked against every dataset (model folder, tokenizer,
# format, window, API key), every data file is looked up, and the GPUs the models ask for are
# compared with this machine's: a problem stops the run there, with the cause in the terminal.
# Evaluation skips (and names, with its inference's error) what has no predictions. One inference
# task per model; raise num_worker and max_num_workers with more GPUs.
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner

infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=1),
    runner=dict(type=CheckedLocalRunner, max_num_workers=1, task=dict(type=LongContextInferTask)),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=8),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
