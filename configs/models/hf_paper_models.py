# The same paper models on Hugging Face transformers (every architecture, slower than vLLM).
# `--models hf_paper_models` runs them all; pick some with e.g.
#   models = [m for m in hf_paper_models if m['abbr'].startswith('chatglm3')]
from opencompass_lveval.models import LongContextHF

hf_paper_models = [
    dict(type=LongContextHF, **entry)
    for entry in __import__('opencompass_lveval.models.zoo', fromlist=['zoo']).hf_entries()
]
models = hf_paper_models
