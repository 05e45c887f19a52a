# LV-Eval, all 55 subsets: `opencompass configs/eval_lveval.py` (data in $LVEVAL_DATA_DIR or
# ./data/LVEval; see the README for getting it onto an offline cluster).
from mmengine.config import read_base

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.hf_chatglm3_6b_32k import models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
work_dir = 'outputs/lveval'
