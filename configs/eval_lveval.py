# LV-Eval, all 55 subsets: `opencompass configs/eval_lveval.py` (data in $LVEVAL_DATA_DIR or
# ./data/LVEval; see the README for getting it onto an offline cluster). Edit `models` to choose.
from mmengine.config import read_base

with read_base():
    from .datasets.lveval.lveval_gen import lveval_datasets
    from .models.vllm_paper_models import vllm_paper_models
    from .summarizers.lveval import summarizer

datasets = lveval_datasets
models = [m for m in vllm_paper_models if m['abbr'] == 'chatglm3-6b-32k-vllm']
work_dir = 'outputs/lveval'
