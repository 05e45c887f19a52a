# The open-weight models of the LV-Eval and Ada-LEval papers on vLLM (the default back end), with
# middle truncation to each model's claimed window. `--models vllm_paper_models` runs them all;
# pick some with e.g.
#   models = [m for m in vllm_paper_models if m['abbr'].startswith('chatglm3')]
from opencompass_lveval.models import LongContextVLLM

vllm_paper_models = [
    dict(type=LongContextVLLM, **entry)
    for entry in __import__('opencompass_lveval.models.zoo', fromlist=['zoo']).vllm_entries()
]
models = vllm_paper_models
