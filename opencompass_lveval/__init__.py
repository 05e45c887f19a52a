"""LV-Eval and Ada-LEval for OpenCompass.

Importing the package is instant: it loads no OpenCompass, torch or Arrow, so the ``lveval``
command starts at once. Each dataset, evaluator, prompt template and model class registers itself
in OpenCompass's registries where it is defined, when its module is imported; config files import
the classes directly, and ``import opencompass_lveval.register`` (or
``custom_imports=dict(imports=['opencompass_lveval.register'])``) registers them all so configs
may name them by string. The classes are also reachable here, loaded on first use: the
framework's from ``_CLASSES``, each benchmark's from its declaration (``Benchmark.classes``).
"""

from __future__ import annotations

import importlib

__version__ = '0.4.0'

# The framework's classes -> module, imported when first asked for (PEP 562).
_CLASSES = {
    'LongContextPromptTemplate': 'prompt_template',
    'DeclaredDataset': 'declared_opencompass',
    'DeclaredEvaluator': 'declared_opencompass',
    'LongContextHF': 'models.hf',
    'LongContextVLLM': 'models.vllm',
    'LongContextAPI': 'models.api',
    'ExtractiveBaseline': 'models.baselines',
    'RandomGuessBaseline': 'models.baselines',
    'LongContextInferTask': 'runner.infer_task',
    'CheckedSlurmRunner': 'runner.slurm',
    'RayRunner': 'runner.ray_runner',
    'CheckedLocalRunner': 'runner.local',
    'CheckedPartitioner': 'runner.prelaunch',
    'JudgeEvalTask': 'runner.judge_task',
    'JudgePartitioner': 'runner.judge_task',
    'LongContextSummarizer': 'report.summarizer',
}


def all_classes() -> dict[str, str]:
    """Every class configs may name by string -> its module: the framework's and every
    registered benchmark's."""
    benchmarks = importlib.import_module(f'{__name__}.benchmarks')
    own = {name: f'{__name__}.{module}' for name, module in _CLASSES.items()}
    return {**own, **benchmarks.classes()}


def __getattr__(name: str):
    if name == '__all__':
        return sorted(all_classes()) + ['__version__']
    if not name[:1].isupper():  # submodules and probes (``__path__``) never load the registry
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    module = _CLASSES.get(name)
    module = f'{__name__}.{module}' if module else all_classes().get(name)
    if module:
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__() -> list[str]:
    return sorted(all_classes()) + ['__version__']
