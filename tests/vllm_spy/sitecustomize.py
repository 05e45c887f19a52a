"""Put on PYTHONPATH by the vLLM tests: in every process of a run (OpenCompass starts each task in
its own), once vLLM's ``LLM`` class is imported, what the engine was started with, each prompt's
token ids as the engine reports them (``RequestOutput.prompt_token_ids``) and what it generated
are appended, one JSON line each, to the file named by ``VLLM_SPY_FILE``. The record comes from
vLLM's own objects, not from the wrapper under test."""

import importlib.abc
import json
import os
import sys

_MODULE = 'vllm.entrypoints.llm'


def _write(line: dict) -> None:
    with open(os.environ['VLLM_SPY_FILE'], 'a', encoding='utf-8') as stream:
        stream.write(json.dumps(line) + '\n')


def _spy_on(llm_class) -> None:
    start, generate = llm_class.__init__, llm_class.generate

    def started(self, *args, **kwargs):
        start(self, *args, **kwargs)
        config = self.model_config
        _write(
            {
                'event': 'engine',
                'pid': os.getpid(),
                'model': config.model,
                'max_model_len': config.max_model_len,
                'rope_parameters': getattr(config.hf_config, 'rope_parameters', None),
                'max_position_embeddings': config.hf_config.max_position_embeddings,
            }
        )

    def generated(self, prompts, *args, **kwargs):
        outputs = generate(self, prompts, *args, **kwargs)
        for output in outputs:
            _write(
                {
                    'event': 'request',
                    'pid': os.getpid(),
                    'model': self.model_config.model,
                    'prompt_token_ids': list(output.prompt_token_ids),
                    'text': output.outputs[0].text,
                    'token_ids': list(output.outputs[0].token_ids),
                }
            )
        return outputs

    llm_class.__init__, llm_class.generate = started, generated


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of ``_MODULE`` so the spy is set once the
    module has run."""

    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, 'find_spec'):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _spy_on(module.LLM)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get('VLLM_SPY_FILE'):
    sys.meta_path.insert(0, _AfterImport())
