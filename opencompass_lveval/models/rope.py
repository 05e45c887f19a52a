"""RoPE scaling (YaRN and the like) in the form the installed transformers and vLLM read.

Rows of the paper-model table give a plain ``rope_scaling`` dict (``rope_type``, ``factor``,
``original_max_position_embeddings``). transformers 5 keeps every RoPE setting in
``config.rope_parameters``, and assigning the legacy ``rope_scaling`` to a loaded config drops
``rope_theta``; transformers 4 reads ``rope_scaling`` beside ``rope_theta``. vLLM from 0.12 applies
dict overrides after its own RoPE handling, so they must be complete (``rope_parameters`` with
``rope_theta``), and from 0.30 the length limit is ``max_position_embeddings``, no longer
original x factor; before 0.12 it takes ``rope_scaling``.
"""

from __future__ import annotations

from typing import Any, Optional


def _major_minor(version: str) -> tuple[int, int]:
    parts = (version.split('+')[0].split('.') + ['0'])[:2]
    return int(parts[0]), int(''.join(c for c in parts[1] if c.isdigit()) or 0)


def scaled_window(scaling: dict) -> int:
    """The positions a scaling covers: original x factor."""
    return int(scaling['original_max_position_embeddings'] * scaling['factor'])


def rope_theta(config: dict) -> Optional[float]:
    """``rope_theta`` of a model's config.json, in either layout."""
    return config.get('rope_theta') or (config.get('rope_parameters') or {}).get('rope_theta')


def apply_to_hf_config(config: Any, scaling: dict, transformers_version: str) -> Any:
    """Set the scaling on a loaded transformers config, keeping ``rope_theta``."""
    if _major_minor(transformers_version)[0] >= 5:
        current = dict(getattr(config, 'rope_parameters', None) or {})
        theta = current.get('rope_theta') or getattr(config, 'rope_theta', None)
        config.rope_parameters = {**current, **scaling, 'rope_theta': theta}
    else:
        config.rope_scaling = dict(scaling)
    config.max_position_embeddings = max(
        getattr(config, 'max_position_embeddings', 0) or 0, scaled_window(scaling)
    )
    return config


def vllm_overrides(model_config: dict, scaling: dict, vllm_version: str) -> dict:
    """``hf_overrides`` for vLLM's ``LLM(...)`` that set ``scaling`` on a model whose config.json
    is ``model_config``."""
    if _major_minor(vllm_version) >= (0, 12):
        return {
            'rope_parameters': {**scaling, 'rope_theta': rope_theta(model_config)},
            'max_position_embeddings': scaled_window(scaling),
        }
    return {'rope_scaling': dict(scaling)}
