"""Model wrappers: long-context vLLM / HF (middle truncation) and CPU baselines."""

from .baselines import ExtractiveBaseline, RandomGuessBaseline
from .hf import LongContextHF
from .vllm import LongContextVLLM

__all__ = ['ExtractiveBaseline', 'LongContextHF', 'LongContextVLLM', 'RandomGuessBaseline']
