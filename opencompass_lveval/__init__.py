"""LV-Eval and Ada-LEval for OpenCompass.

Importing the package is instant: it loads no OpenCompass, torch or Arrow, so the ``lveval``
command starts at once. Each dataset, evaluator, prompt template and model class registers itself
in OpenCompass's registries where it is defined, when its module is imported; config files import
the classes directly, and ``import opencompass_lveval.framework.register`` (or
``custom_imports=dict(imports=['opencompass_lveval.framework.register'])``) registers them all so configs
may name them by string. The classes are also reachable here, loaded on first use: the
framework's from ``_CLASSES``, each benchmark's from its declaration (``Benchmark.classes``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

__version__ = '0.4.0'

# The framework's classes -> module, imported when first asked for (PEP 562).
_CLASSES = {
    'LongContextPromptTemplate': 'prompts.prompt_template',
    'DeclaredDataset': 'framework.declared_opencompass',
    'DeclaredEvaluator': 'framework.declared_opencompass',
    'LongContextHF': 'models.hf',
    'LongContextVLLM': 'models.vllm',
    'LongContextAPI': 'models.api',
    'ExtractiveBaseline': 'models.baselines',
    'RandomGuessBaseline': 'models.baselines',
    'LongContextInferTask': 'runner.infer_task',
    'CheckedSlurmRunner': 'runner.slurm',
    'RayRunner': 'runner.ray_runner',
    'ServeOnceRunner': 'runner.serve_once',
    'ServedVLLM': 'serving.served',
    'CheckedLocalRunner': 'runner.local',
    'CheckedPartitioner': 'runner.prelaunch',
    'JudgeEvalTask': 'runner.judge_task',
    'JudgePartitioner': 'runner.judge_task',
    'LongContextSummarizer': 'report.summarizer',
}


def all_classes() -> dict[str, str]:
    """Every class configs may name by string -> its module: the framework's and every
    registered benchmark's."""
    benchmarks = importlib.import_module(f'{__name__}.framework.benchmarks')
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


# Old module name -> the folder it moved to (0.5), for what users' configs and plugins import.
_MOVED = {
    **dict.fromkeys(
        ('benchmarks', 'declared', 'declared_opencompass', 'grid', 'grid_tables', 'datacheck'),
        'framework',
    ),
    **dict.fromkeys(('sizes', 'register'), 'framework'),
    **dict.fromkeys(('atomic', 'jsonl', 'cache', 'columnar', 'errors', 'responses'), 'files'),
    **dict.fromkeys(('prompt_template', 'truncation', 'cuttable', 'text'), 'prompts'),
    **dict.fromkeys(('intervals', 'rounding', 'tables', 'provenance'), 'report'),
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``opencompass_lveval.X`` for a moved X is the very module object at its new place (one
    module, one registry), imported when first asked for."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition('.')
        if package != __name__ or name not in _MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        name = spec.name.rpartition('.')[2]
        return importlib.import_module(f'{__name__}.{_MOVED[name]}.{name}')

    def exec_module(self, module) -> None:
        """Nothing to run (the module ran at its new place); the import system has just set the
        module's ``__spec__`` to the old name's, so it gets its own back."""
        module.__spec__ = importlib.machinery.PathFinder.find_spec(
            module.__name__, sys.modules[module.__name__.rpartition('.')[0]].__path__
        )


sys.meta_path.insert(0, _MovedModules())  # before any finder that knows the old files
