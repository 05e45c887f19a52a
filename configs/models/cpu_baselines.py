# Weightless CPU baselines: a floor row for every table, and a pipeline that runs anywhere.
from opencompass_lveval.models import ExtractiveBaseline, RandomGuessBaseline

models = [
    dict(
        type=ExtractiveBaseline,
        abbr='extractive-bm25',
        batch_size=64,
        max_out_len=64,
        run_cfg=dict(num_gpus=0),
    ),
    dict(
        type=RandomGuessBaseline,
        abbr='random-guess',
        seed=0,
        batch_size=64,
        max_out_len=64,
        run_cfg=dict(num_gpus=0),
    ),
]
