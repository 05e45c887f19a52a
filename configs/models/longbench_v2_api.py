# The LongBench v2 paper's API settings (THUDM/LongBench pred.py): every model called through an
# OpenAI-compatible chat endpoint, one user message, temperature 0.1, the prompt cut in the middle
# to config/model2maxlen.json's budget on the ids of the model's tokenizer (tiktoken's gpt-4o
# encoding, o200k_base, for the GPT and o1 rows), `model` = config/model2path.json's value.
# `inputs='official', official='longbench_v2'` sends exactly that (docs/longbench_v2.md).
# Open-weight rows: `vllm serve MODEL --port 8000` as pred.py expects (its URL), the tokenizer
# folder on this machine (tokenizer_path: a local copy of the model2path repository). The GPT and
# o1 rows: OPENAI_API_KEY in the environment; o200k_base must be in tiktoken's cache offline.
from opencompass_lveval.models import LongContextAPI

_tasks = __import__('opencompass_lveval.longbench_v2.tasks', fromlist=['MODEL_MAX_LENGTHS'])
_OPENAI = 'https://api.openai.com/v1'
_SERVED = 'http://127.0.0.1:8000/v1'  # pred.py's hard-coded server
longbench_v2_api_models = [
    dict(
        type=LongContextAPI,
        abbr=f'{name}-longbench-v2',
        path=_tasks.served_model(name),
        url=_SERVED if name in _tasks.MODEL_PATHS else _OPENAI,
        key_env=None if name in _tasks.MODEL_PATHS else 'OPENAI_API_KEY',
        tokenizer_path=_tasks.MODEL_PATHS.get(name, 'o200k_base'),
        inputs='official',
        official='longbench_v2',
        max_length=budget,
        max_seq_len=budget + 8192,
        batch_size=16,
        concurrency=16,
        run_cfg=dict(num_gpus=0),
    )
    for name, budget in _tasks.MODEL_MAX_LENGTHS.items()
]
del _tasks, _OPENAI, _SERVED
