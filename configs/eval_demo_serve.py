# The demo's datasets answered by vLLM servers started once for the whole inference stage:
#   lveval data synth data/demo && LVEVAL_SERVE_MODEL=FOLDER opencompass configs/eval_demo_serve.py
# FOLDER is a model vLLM can load (default models/tiny-llama: a 2-layer random Llama made by
# `python -c "from pathlib import Path; from opencompass_lveval.testing import save_tiny_llama;
# save_tiny_llama(Path('models/tiny-llama'), 8192, hidden_size=256, intermediate_size=512,
# heads=4, tie_word_embeddings=True)"`). ServeOnceRunner plans every request first, starts
# `replicas` servers, feeds them longest first with at most cap_tokens in flight each (default:
# the engine's KV capacity), then the second calls of two-call answers (LongBench v2's chain of
# thought) planned from the stored first replies, and writes the prediction files as
# LongContextVLLM would; -r asks only what was not answered (the replies are kept in the run
# folder, serve/replies).
from mmengine.config import read_base
from opencompass.partitioners import NaivePartitioner
from opencompass.tasks import OpenICLEvalTask

from opencompass_lveval.models import LongContextVLLM
from opencompass_lveval.runner.infer_task import LongContextInferTask
from opencompass_lveval.runner.local import CheckedLocalRunner
from opencompass_lveval.runner.prelaunch import CheckedPartitioner
from opencompass_lveval.runner.serve_once import ServeOnceRunner

with read_base():
    from .eval_demo import datasets, summarizer

# MRCR v2's demo rows (its 8k bin) are past this demo's 4k window even with every earlier turn
# dropped (the last request alone is longer): each would stop the plan with a TruncationError.
# OpenAI MRCR's 8k rows fit once early turns are dropped.
datasets = [d for d in datasets if not d['abbr'].startswith('MRCR_v2_')]

models = [
    dict(
        type=LongContextVLLM,
        abbr='tiny-llama-vllm',
        path=__import__('os').environ.get('LVEVAL_SERVE_MODEL', 'models/tiny-llama'),
        max_seq_len=4096,
        max_out_len=32,
        batch_size=8,
        model_kwargs=dict(dtype='float32', enforce_eager=True),
        run_cfg=dict(num_gpus=0),
    )
]
work_dir = 'outputs/demo_serve'
infer = dict(
    partitioner=dict(type=CheckedPartitioner, num_worker=4),
    runner=dict(
        type=ServeOnceRunner,
        replicas=2,
        placement='local',
        request_deadline_s=600,
        ready_timeout_s=900,
        replica_env=dict(VLLM_CPU_KVCACHE_SPACE='1'),
        runner=dict(type=CheckedLocalRunner, max_num_workers=2),
        task=dict(type=LongContextInferTask),
    ),
)
eval = dict(
    partitioner=dict(type=NaivePartitioner, n=len(datasets)),
    runner=dict(type=CheckedLocalRunner, max_num_workers=2, task=dict(type=OpenICLEvalTask)),
)
