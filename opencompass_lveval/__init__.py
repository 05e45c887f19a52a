"""LV-Eval (and, later, Ada-LEval) for OpenCompass.

Importing the package registers its dataset, evaluator and model classes in OpenCompass's registries, so
configs may name them by string as well as import them.
"""
from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET, MODELS

from .lveval.dataset import LVEvalDataset
from .lveval.evaluator import LVEvalEvaluator
from .models import ExtractiveBaseline, LongContextHF, LongContextVLLM, RandomGuessBaseline

LOAD_DATASET.register_module(module=LVEvalDataset)
ICL_EVALUATORS.register_module(module=LVEvalEvaluator)
for _model in (ExtractiveBaseline, LongContextHF, LongContextVLLM, RandomGuessBaseline):
    MODELS.register_module(module=_model)

__all__ = ['ExtractiveBaseline', 'LVEvalDataset', 'LVEvalEvaluator', 'LongContextHF',
           'LongContextVLLM', 'RandomGuessBaseline']
