"""What a model's own config.json allows, read before any weights: how many positions it has and
how many token ids its embedding holds. A window (``max_seq_len``) past the positions feeds the
model ids at positions it never learned (answers come back, wrong, with no error); a tokenizer
with more tokens than the embedding fails inside the model (a device-side assert on a GPU). Both
are checked where a model config enters: the wrappers, ``lveval inputs`` and the check before
the weights.

The positions are read as vLLM reads them: the smallest of the keys model families use
(``max_position_embeddings``, ``seq_length``...), times the factor of a RoPE scaling the config
declares (YaRN: its original positions times the factor; ``llama3`` and ``longrope`` configs
count the scaled positions already), or, where the model config gives ``rope_scaling=``, the
positions that scaling covers, which the wrappers set (``rope.py``). vLLM's own ``hf_overrides``
in ``model_kwargs`` apply on top, as vLLM applies them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..files.errors import ModelConfigError
from .settings import InputSettings, is_count

POSITION_KEYS = (
    'max_position_embeddings',
    'n_positions',
    'max_seq_len',
    'seq_length',
    'max_sequence_length',
    'max_seq_length',
    'seq_len',
)
VOCABULARY_KEYS = ('vocab_size', 'padded_vocab_size')
# RoPE types whose config already counts the scaled positions in max_position_embeddings.
SCALED_ALREADY = ('su', 'longrope', 'llama3')
SCALING_KEYS = "dict(rope_type='yarn', factor=4.0, original_max_position_embeddings=32768)"


@dataclass(frozen=True)
class ModelConfig:
    """A model's config.json (the text model's part, for a model that has one) and where it
    was read."""

    file: str
    fields: dict

    def _smallest(self, keys: tuple[str, ...]) -> Optional[tuple[int, str]]:
        found = [(self.fields[key], key) for key in keys if is_count(self.fields.get(key))]
        found = [(value, key) for value, key in found if value > 0]
        return min(found) if found else None

    def positions(self, rope_scaling: Optional[dict]) -> Optional[tuple[int, str]]:
        """(the positions the model has, how they were counted); None where the config names
        none."""
        found = self._smallest(POSITION_KEYS)
        if found is None:
            return None
        base, key = found
        if rope_scaling:  # the wrappers raise max_position_embeddings to what it covers
            covered = scaled_positions(rope_scaling)
            return max(base, covered), f'{key} {base}, rope_scaling= covering {covered}'
        scaling = self.fields.get('rope_scaling') or self.fields.get('rope_parameters')
        if not isinstance(scaling, Mapping):
            return base, f'{key} {base}'
        kind = scaling.get('rope_type') or scaling.get('type') or 'default'
        factor = scaling.get('factor')
        if kind in SCALED_ALREADY or not _is_factor(factor):
            return base, f'{key} {base}'
        if 'yarn' in kind:
            original = scaling.get('original_max_position_embeddings')
            original = original if is_count(original) else base
            return max(base, int(original * factor)), f'{kind} RoPE: {original} x {factor:g}'
        return int(base * factor), f'{key} {base} x {kind} RoPE factor {factor:g}'

    def vocabulary(self) -> Optional[tuple[int, str]]:
        """(the token ids the embedding holds, the key that says so); None where none does."""
        return self._smallest(VOCABULARY_KEYS)


def _is_factor(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def scaled_positions(rope_scaling: Any) -> int:
    """The positions a ``rope_scaling=`` setting covers (original x factor), checked first: a
    dict missing a key failed deep inside the wrappers."""
    if not isinstance(rope_scaling, Mapping):
        raise ModelConfigError(f'rope_scaling must be a dict such as {SCALING_KEYS}')
    original = rope_scaling.get('original_max_position_embeddings')
    factor = rope_scaling.get('factor')
    kind = rope_scaling.get('rope_type', rope_scaling.get('type'))
    if not isinstance(kind, str) or not _is_factor(factor) or not is_count(original):
        raise ModelConfigError(
            f'rope_scaling needs rope_type (a name), factor (a positive number) and '
            f'original_max_position_embeddings (a whole number), such as {SCALING_KEYS}; '
            f'got {dict(rope_scaling)!r}'
        )
    return int(original * factor)


def read_model_config(path: str, overrides: Optional[Mapping] = None) -> Optional[ModelConfig]:
    """The config.json of a model folder, or of a hub id in the Hugging Face cache, with vLLM's
    ``overrides`` applied; None where it is not on this machine (nothing to check against)."""
    folder = os.path.expanduser(str(path))
    if not folder:
        return None
    if os.path.isdir(folder):
        file = os.path.join(folder, 'config.json')
        file = file if os.path.isfile(file) else None
    else:
        file = _cached_config(str(path))
    if file is None:
        return None
    try:
        with open(file, encoding='utf-8') as stream:
            config = json.load(stream)
    except (OSError, ValueError) as exc:
        raise ModelConfigError(f'{file} cannot be read as JSON ({exc}): fix or replace it') from exc
    if not isinstance(config, dict):
        raise ModelConfigError(f'{file} holds {type(config).__name__}, not a JSON object')
    text = config.get('text_config')
    fields = dict(text if isinstance(text, dict) else config)
    if isinstance(overrides, Mapping):
        fields.update(overrides)
    return ModelConfig(file, fields)


def _cached_config(repo: str) -> Optional[str]:
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo, 'config.json')
    except ValueError:  # not a hub id either: the tokenizer's load says so
        return None
    return found if isinstance(found, str) else None


def check_model_limits(
    settings: InputSettings,
    tokenizer: Any,
    rope_scaling: Optional[dict] = None,
    model_kwargs: Optional[Mapping] = None,
) -> None:
    """Raise where the settings or the tokenizer ask more than the model's config.json allows,
    or where vLLM's ``max_model_len`` would differ from the window the inputs are cut to."""
    name, window = settings.name, settings.window
    if rope_scaling:
        scaled_positions(rope_scaling)
    model_kwargs = model_kwargs or {}
    engine_window = model_kwargs.get('max_model_len')
    if engine_window is not None and (not is_count(engine_window) or engine_window < window):
        raise ModelConfigError(
            f'{name}: model_kwargs max_model_len {engine_window!r} is less than max_seq_len '
            f'{window}, the window inputs are cut to (vLLM would refuse the longest): leave '
            'max_model_len out, max_seq_len becomes it'
        )
    config = read_model_config(settings.path, model_kwargs.get('hf_overrides'))
    if config is None:
        return
    positions = config.positions(rope_scaling or None)
    if positions is not None and window > positions[0]:
        raise ModelConfigError(
            f'{name}: max_seq_len {window} is past the {positions[0]} positions of the model '
            f'({positions[1]}, in {config.file}): lower max_seq_len to {positions[0]}, or give '
            f'rope_scaling={SCALING_KEYS} that covers {window}'
        )
    vocabulary = config.vocabulary()
    if vocabulary is not None and len(tokenizer) > vocabulary[0]:
        raise ModelConfigError(
            f'{name}: its tokenizer has {len(tokenizer)} tokens, more than the {vocabulary[0]} '
            f"ids of the model's embedding ({vocabulary[1]} in {config.file}): ids from "
            f'{vocabulary[0]} up fail inside the model. Give the tokenizer the model was trained '
            'with (its own files, or tokenizer_path=)'
        )
