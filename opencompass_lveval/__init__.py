"""LV-Eval (and, later, Ada-LEval) for OpenCompass.

Importing the package registers its dataset and evaluator classes in OpenCompass's registries, so
configs may name them by string as well as import them.
"""
from opencompass.registry import ICL_EVALUATORS, LOAD_DATASET

from .lveval.dataset import LVEvalDataset
from .lveval.evaluator import LVEvalEvaluator

LOAD_DATASET.register_module(module=LVEvalDataset)
ICL_EVALUATORS.register_module(module=LVEvalEvaluator)

__all__ = ['LVEvalDataset', 'LVEvalEvaluator']
