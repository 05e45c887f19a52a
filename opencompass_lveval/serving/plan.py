"""Every request of an inference stage, known before any weights load.

A ``LongContextVLLM`` model's request for a record is its ids (``InputBuilder``, what ``lveval
inputs`` prints) and its sampling settings (``sampling_settings``, what the in-process wrapper
passes vLLM). Planning renders each record as the inferencer does (the dataset's template, the
model's role parser: ``commands/inputs.count_pair``'s route) and builds the ids with the same
builder the served model (``served.ServedVLLM``) uses when it materialises the predictions; the
key of a request is a digest of the model's identity, the ids and the sampling settings
(``request_key``), computed by that same function on both sides, so a planned reply is found by
construction, and a stage whose prompts were rendered otherwise fails loudly at materialising.

Cost: prompt tokens plus answer tokens, the work an engine does for the request to first order
(decoding reads the whole prompt's KV cache each step; prefill is linear in L until attention
dominates). ``quadratic_cost`` adds the attention term of prefill from the model's config.json:
a * L + b * L^2 with a = 1 and b = 1 / (12 * hidden_size), the ratio of a layer's causal
attention FLOPs (2 * L^2 * hidden) to its matrices' (24 * L * hidden^2); it matters where L
reaches several times hidden_size (a 128k prompt of an 8B model: 2.5 times the linear term).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..models.settings import answer_length
from ..models.vllm import engine_kwargs, installed_vllm_version, sampling_settings


@dataclass(frozen=True)
class PlannedRequest:
    """One request to a replica: ``body`` is what ``/v1/completions`` is sent."""

    key: str
    cost: int
    prompt_ids: list[int] = field(repr=False)
    max_tokens: int
    body: dict = field(repr=False)
    label: str = ''  # model x dataset x index, for messages


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(',', ':')).encode()


def model_identity(model_cfg: dict) -> str:
    """A digest of what decides a model's answers besides the request: its weights folder (as
    resolved) and the engine settings it is served with (window, dtype, RoPE overrides...)."""
    path = model_cfg['path']
    settings = engine_kwargs(
        path,
        model_cfg['max_seq_len'],
        dict(model_cfg.get('model_kwargs') or {}),
        model_cfg.get('rope_scaling'),
        bool(model_cfg.get('trust_remote_code', False)),
        installed_vllm_version(),
    )
    resolved = os.path.realpath(os.path.expanduser(path))
    return hashlib.sha256(_canonical({'path': resolved, 'engine': settings})).hexdigest()[:24]


def request_key(identity: str, prompt_ids: list[int], sampling: dict) -> str:
    """The reply store's key of a request (``model_identity``, the ids, ``sampling_settings``)."""
    payload = _canonical({'model': identity, 'prompt_ids': prompt_ids, 'sampling': sampling})
    return hashlib.sha256(payload).hexdigest()


def completion_body(served_name: str, prompt_ids: list[int], sampling: dict) -> dict:
    """What a replica's ``/v1/completions`` is sent: the ids as they are, the sampling."""
    return {'model': served_name, 'prompt': prompt_ids, **sampling}


def quadratic_cost(model_path: str) -> Optional[float]:
    """b of a * L + b * L^2 (a = 1) from the model's config.json, or None where it gives no
    hidden_size (see the module)."""
    config = Path(os.path.expanduser(model_path)) / 'config.json'
    try:
        hidden = json.loads(config.read_text()).get('hidden_size')
    except (OSError, ValueError):
        return None
    return 1 / (12 * hidden) if isinstance(hidden, int) and hidden > 0 else None


def request_cost(prompt_tokens: int, answer_tokens: int, square: Optional[float] = None) -> int:
    """Tokens of work: prompt plus answer, and the attention term where ``square`` is given."""
    extra = square * prompt_tokens**2 if square else 0
    return int(prompt_tokens + answer_tokens + extra)


def _stopping_criteria(dataset_cfg: dict) -> list[str]:
    """The stop strings the inferencer passes ``generate`` (OpenCompass's GenInferencer)."""
    return list(dataset_cfg['infer_cfg']['inferencer'].get('stopping_criteria') or [])


def plan_pair(
    model_cfg: dict,
    dataset_cfg: dict,
    identity: str,
    builder: Any,
    stop_words: list[str],
    square: Optional[float] = None,
) -> Iterator[PlannedRequest]:
    """The requests of one model x dataset, in record order."""
    from opencompass.registry import ICL_PROMPT_TEMPLATES
    from opencompass.utils import build_dataset_from_cfg

    from ..models.template import prompt_parser

    dataset = build_dataset_from_cfg(dataset_cfg)
    template = ICL_PROMPT_TEMPLATES.build(dataset_cfg['infer_cfg']['prompt_template'])
    parser = prompt_parser(model_cfg.get('meta_template'))
    max_out_len = answer_length(model_cfg, dataset_cfg)
    sampling = sampling_settings(
        stop_words,
        _stopping_criteria(dataset_cfg),
        dict(model_cfg.get('generation_kwargs') or {}),
        max_out_len,
    )
    for index in range(len(dataset.test)):
        prompt = template.generate_item(
            dataset.test[index], output_field=dataset.reader.output_column
        )
        ids = builder.build(parser.parse_template(prompt, mode='gen'), max_out_len).ids
        yield PlannedRequest(
            key=request_key(identity, ids, sampling),
            cost=request_cost(len(ids), max_out_len, square),
            prompt_ids=ids,
            max_tokens=max_out_len,
            body=completion_body(served_model_name(identity), ids, sampling),
            label=f'{model_cfg["abbr"]} x {dataset_cfg["abbr"]} #{index}',
        )


def served_model_name(identity: str) -> str:
    """The name replicas serve a model under (``--served-model-name``)."""
    return f'lveval-{identity}'


def model_stop_words(model_cfg: dict, builder: Any) -> list[str]:
    """``LongContextModel``'s stop words: the config's and the tokenizer's end-of-sequence."""
    eos = getattr(builder.tokenizer, 'eos_token', None)
    return sorted(set(list(model_cfg.get('stop_words') or []) + ([eos] if eos else [])))


def plan_model(
    model_cfg: dict, dataset_cfgs: list[dict], cost_model: str = 'linear'
) -> list[PlannedRequest]:
    """Every request of a model over the datasets, each key once (two datasets asking the same
    thing share one reply), longest first."""
    from ..models.vllm import LongContextVLLM

    identity = model_identity(model_cfg)
    builder = LongContextVLLM.config_builder(model_cfg)
    stop_words = model_stop_words(model_cfg, builder)
    square = quadratic_cost(model_cfg['path']) if cost_model == 'quadratic' else None
    planned: dict[str, PlannedRequest] = {}
    for dataset_cfg in dataset_cfgs:
        for request in plan_pair(model_cfg, dataset_cfg, identity, builder, stop_words, square):
            planned.setdefault(request.key, request)
    return sorted(planned.values(), key=lambda r: (-r.cost, r.key))
