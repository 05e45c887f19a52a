"""LV-Eval and Ada-LEval for OpenCompass.

Importing the package registers its dataset, evaluator and model classes in OpenCompass's
registries, so configs may name them by string as well as import them.
"""
from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET, MODELS

from .adaleval.dataset import AdaLEvalDataset
from .adaleval.evaluator import AdaLEvalEvaluator
from .lveval.dataset import LVEvalDataset
from .lveval.evaluator import LVEvalEvaluator
from .models import ExtractiveBaseline, LongContextHF, LongContextVLLM, RandomGuessBaseline

for _dataset in (LVEvalDataset, AdaLEvalDataset):
    LOAD_DATASET.register_module(module=_dataset)
for _evaluator in (LVEvalEvaluator, AdaLEvalEvaluator):
    ICL_EVALUATORS.register_module(module=_evaluator)
for _model in (ExtractiveBaseline, LongContextHF, LongContextVLLM, RandomGuessBaseline):
    MODELS.register_module(module=_model)

__all__ = ['AdaLEvalDataset', 'AdaLEvalEvaluator', 'ExtractiveBaseline', 'LVEvalDataset',
           'LVEvalEvaluator', 'LongContextHF', 'LongContextVLLM', 'RandomGuessBaseline']
