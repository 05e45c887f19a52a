# The same paper models on Hugging Face transformers (every architecture, slower than vLLM).
from opencompass_lveval.models import LongContextHF

hf_paper_models = [
    dict(type=LongContextHF, **entry)
    for entry in __import__('opencompass_lveval.models.zoo', fromlist=['zoo']).hf_entries()
]
