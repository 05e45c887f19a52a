"""vLLM's OpenAI-compatible server for a ``LongContextVLLM`` config: its command line, in the
form the installed vLLM parses, from the release checked (``VLLM_RANGE``, 0.6.4) to the newest.

The server gets the engine settings the wrapper gives ``LLM(...)`` (``engine_kwargs``: the
window, prefix caching, chunked prefill for long windows, RoPE scaling as ``hf_overrides``, the
config's ``model_kwargs`` such as dtype and tensor_parallel_size). Two things moved between
releases, and the command follows the release:

- Sampling defaults. ``SamplingParams`` in process uses vLLM's own defaults. Servers before 0.8
  did too, and had no ``--generation-config`` (0.6.5 added it with no default; 0.8 made the
  model's generation_config.json the default and added the value ``vllm`` for vLLM's own): from
  0.8 the command says ``--generation-config vllm``, before it says nothing.
- Switches set off. A switch whose default is off is left out (``trust_remote_code=False``; 0.6.4
  knows no ``--no-trust-remote-code``). The two the engine turns on by itself (prefix caching and
  chunked prefill, on in the V1 engine from 0.8) are turned off in the form each release parses:
  ``--no-enable-prefix-caching`` from 0.8 (before, off is the default), and
  ``--enable-chunked-prefill False`` before 0.10 (a switch taking a value), then
  ``--no-enable-chunked-prefill``.
"""

from __future__ import annotations

import json
import os
import sys

SERVER_MODULE = 'vllm.entrypoints.openai.api_server'
GENERATION_CONFIG_FROM = (0, 8)  # '--generation-config vllm' understood, and needed
NO_PREFIX_CACHING_FROM = (0, 8)
NO_CHUNKED_PREFILL_FROM = (0, 10)


def release(version: str) -> tuple[int, int]:
    """(major, minor) of a version string such as '0.6.4' or '0.8.5.post1'."""
    parts = [int(''.join(c for c in part if c.isdigit()) or 0) for part in version.split('.')[:2]]
    return (parts + [0, 0])[0], (parts + [0, 0])[1]


def engine_flag(name: str, value, version: str) -> list[str]:
    """An engine argument as this release's server takes it on its command line."""
    option = '--' + name.replace('_', '-')
    at = release(version)
    if value is True:
        return [option]
    if value is False:
        if name == 'enable_prefix_caching' and at >= NO_PREFIX_CACHING_FROM:
            return ['--no-enable-prefix-caching']
        if name == 'enable_chunked_prefill':
            if at >= NO_CHUNKED_PREFILL_FROM:
                return ['--no-enable-chunked-prefill']
            return [option, 'False']
        return []  # off by default in every release
    if isinstance(value, (dict, list)):
        return [option, json.dumps(value)]
    return [option, str(value)]


def model_engine_settings(model_cfg: dict, vllm_version: str) -> dict:
    """The ``LLM(...)`` keyword arguments of a model config (``engine_kwargs``)."""
    from ..models.vllm import engine_kwargs

    return engine_kwargs(
        model_cfg['path'],
        model_cfg['max_seq_len'],
        dict(model_cfg.get('model_kwargs') or {}),
        model_cfg.get('rope_scaling'),
        bool(model_cfg.get('trust_remote_code', False)),
        vllm_version,
    )


def vllm_server_argv(model_cfg: dict, served_name: str, vllm_version: str = '') -> list[str]:
    """The server's command, with ``{host}`` and ``{port}`` for the placement to fill."""
    from ..models.vllm import installed_vllm_version

    version = vllm_version or installed_vllm_version()
    argv = [sys.executable, '-m', SERVER_MODULE]
    argv += ['--model', os.path.expanduser(model_cfg['path']), '--served-model-name', served_name]
    argv += ['--host', '{host}', '--port', '{port}']
    if release(version) >= GENERATION_CONFIG_FROM:
        argv += ['--generation-config', 'vllm']
    for name, value in model_engine_settings(model_cfg, version).items():
        argv += engine_flag(name, value, version)
    return argv
