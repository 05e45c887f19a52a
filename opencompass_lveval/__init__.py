"""LV-Eval and Ada-LEval for OpenCompass.

Importing the package is instant: it loads no OpenCompass, torch or Arrow, so the ``lveval``
command starts at once. Each dataset, evaluator, prompt template and model class registers itself
in OpenCompass's registries where it is defined, when its module is imported; config files import
the classes directly, and ``import opencompass_lveval.register`` (or
``custom_imports=dict(imports=['opencompass_lveval.register'])``) registers them all so configs
may name them by string. The classes are also reachable here, loaded on first use.
"""

from __future__ import annotations

import importlib

__version__ = '0.4.0'

# Class -> module, imported when the class is first asked for (PEP 562).
_CLASSES = {
    'LVEvalDataset': 'lveval.dataset',
    'LVEvalEvaluator': 'lveval.evaluator',
    'LVEvalJudgeEvaluator': 'lveval.evaluator',
    'AdaLEvalDataset': 'adaleval.dataset',
    'AdaLEvalEvaluator': 'adaleval.evaluator',
    'LongContextPromptTemplate': 'prompt_template',
    'LongContextHF': 'models.hf',
    'LongContextVLLM': 'models.vllm',
    'LongContextAPI': 'models.api',
    'ExtractiveBaseline': 'models.baselines',
    'RandomGuessBaseline': 'models.baselines',
    'LongContextInferTask': 'runner.infer_task',
    'CheckedSlurmRunner': 'runner.slurm',
    'JudgeEvalTask': 'runner.judge_task',
    'JudgePartitioner': 'runner.judge_task',
    'LongContextSummarizer': 'report.summarizer',
}
__all__ = sorted(_CLASSES) + ['__version__']


def __getattr__(name: str):
    if name in _CLASSES:
        return getattr(importlib.import_module(f'.{_CLASSES[name]}', __name__), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__() -> list[str]:
    return __all__
