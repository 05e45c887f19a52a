"""Model wrappers: long-context vLLM / HF (middle truncation), OpenAI-compatible APIs, CPU
baselines."""

from .api import LongContextAPI
from .baselines import ExtractiveBaseline, RandomGuessBaseline
from .hf import LongContextHF
from .vllm import LongContextVLLM

__all__ = [
    'ExtractiveBaseline',
    'LongContextAPI',
    'LongContextHF',
    'LongContextVLLM',
    'RandomGuessBaseline',
]
