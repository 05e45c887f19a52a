"""The input settings of a long-context model: one frozen object, built by name from a model config.

The wrappers (built by OpenCompass from a model config), ``lveval inputs`` and the pre-run check
(which read the same config without weights) all make their input builder from an
``InputSettings``, and all build it with ``from_config``: values are checked at once, and a key
that neither the settings nor the wrapper class nor OpenCompass knows is an error naming the
closest valid key, instead of being ignored (``conversaton=`` meant ``conversation=``).
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Optional, Union

from ..files.errors import ModelConfigError
from .formats import Format, conversation_format
from .official import official_path

MODES = ('exact', 'official')
PATHS = (str, os.PathLike)

# What OpenCompass reads from a model config itself and pops before building the model
# (``opencompass.utils.build.build_model_from_cfg``), and the registry's ``type``.
OPENCOMPASS_KEYS = frozenset(
    {
        'type',
        'run_cfg',
        'max_out_len',
        'batch_size',
        'abbr',
        'summarizer_abbr',
        'pred_postprocessor',
        'min_out_len',
    }
)

# A config key that names a field otherwise: OpenCompass's ``max_seq_len`` is the model window.
_CONFIG_KEY = {'window': 'max_seq_len'}


@dataclass(frozen=True)
class InputSettings:
    """How a model's inputs are made (``inputs.py``), checked when built.

    ``window``: the model window (``max_seq_len`` in a config); ``inputs``: 'exact' or 'official';
    ``official``: whose prediction code official inputs follow (``official.py``: 'lveval', the
    default, 'adaleval', 'longbench_v2', 'mrcr'); ``chat``: frame the prompt as a chat (False: a
    base model, the tokenizer's special tokens only); ``conversation``: an official format name
    (``formats.FORMATS``) or format object, None for the tokenizer's chat template;
    ``max_length``: the official budget (LV-Eval's ``--model-max-length``, default the window in
    thousands less 500; LongBench v2's ``model2maxlen``, no default); ``chat_template_kwargs``:
    passed to ``apply_chat_template``; ``tokenizer_path``/``tokenizer_kwargs``/
    ``trust_remote_code``: how the tokenizer loads (``path`` unless ``tokenizer_path`` is given).
    ``path`` also names the model in messages.
    """

    window: int
    path: str = ''
    inputs: str = 'exact'
    official: Optional[str] = None
    chat: bool = True
    conversation: Union[str, Format, None] = None
    max_length: Optional[int] = None
    chat_template_kwargs: Optional[dict] = None
    tokenizer_path: Optional[str] = None
    tokenizer_kwargs: Optional[dict] = None
    trust_remote_code: bool = False

    def __post_init__(self) -> None:
        def fail(problem: str):
            raise ModelConfigError(f'{self.name}: {problem}')

        if not is_count(self.window) or self.window <= 0:
            fail(
                f'max_seq_len (the model window) must be set to a positive number of tokens, '
                f'not {self.window!r}'
            )
        if self.inputs not in MODES:
            fail(f'inputs must be one of {MODES}, not {self.inputs!r}')
        for name in ('chat', 'trust_remote_code'):
            if not isinstance(getattr(self, name), bool):
                fail(f'{name} must be True or False, not {getattr(self, name)!r}')
        if self.max_length is not None and (not is_count(self.max_length) or self.max_length <= 0):
            fail(f'max_length must be a positive number of tokens, not {self.max_length!r}')
        for name in ('chat_template_kwargs', 'tokenizer_kwargs'):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), Mapping):
                fail(f'{name} must be a dict, not {getattr(self, name)!r}')
        for name in ('path', 'tokenizer_path'):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), PATHS):
                fail(f'{name} must be a string (a folder or a hub id), not {getattr(self, name)!r}')
        try:
            conversation_format(self.conversation)
        except ValueError as exc:
            fail(str(exc))
        path = official_path(self.official, self.name)
        if self.inputs == 'official' and path.max_length_needed and self.max_length is None:
            fail(
                f"official={path.name!r} cuts prompts to the paper's budget: set max_length "
                '(LongBench v2: config/model2maxlen.json, 120000 for most of its models; '
                'opencompass_lveval.longbench_v2.tasks.MODEL_MAX_LENGTHS)'
            )

    @property
    def name(self) -> str:
        """What messages call the model."""
        return str(self.path) if self.path else 'model'

    @classmethod
    def config_keys(cls) -> frozenset[str]:
        """The settings as a model config names them."""
        return frozenset(_CONFIG_KEY.get(f.name, f.name) for f in fields(cls))

    @classmethod
    def from_config(cls, config: Mapping[str, Any], accepted: Iterable[str] = ()) -> InputSettings:
        """The settings of a model config (or of a wrapper's keyword arguments). Every key must
        be a setting, one of ``accepted`` (the wrapper's other arguments) or one OpenCompass
        takes itself (``OPENCOMPASS_KEYS``); an unknown key is an error naming the closest."""
        known = cls.config_keys() | OPENCOMPASS_KEYS | set(accepted)
        for key in config:
            if key not in known:
                who = config.get('abbr') or config.get('path') or 'model'
                raise ModelConfigError(f'{who}: {unknown_key_message(key, known)}')
        values = {
            f.name: config[_CONFIG_KEY.get(f.name, f.name)]
            for f in fields(cls)
            if _CONFIG_KEY.get(f.name, f.name) in config
        }
        if 'window' not in values:
            values['window'] = None  # the check names the missing key
        return cls(**values)


def answer_length(model_cfg: Mapping[str, Any], dataset_cfg: Mapping[str, Any]) -> int:
    """The answer length a dataset asks of a model, as OpenCompass decides it: the dataset's
    inferencer ``max_out_len``, else the model's; perplexity scoring generates nothing (0). A
    generating dataset's must be a positive number of tokens: 0 or less made budgets past the
    window, and none at all failed at the first batch. Callers name the model and dataset."""
    inferencer = dataset_cfg['infer_cfg']['inferencer']
    kind = str(inferencer.get('type', ''))
    if 'PPL' in kind:
        return 0
    value = inferencer.get('max_out_len', model_cfg.get('max_out_len'))
    if value is None and 'Gen' not in kind:
        return 0  # an inferencer that takes no answer length
    if is_count(value) and value > 0:
        return value
    where = "the dataset's inferencer" if 'max_out_len' in inferencer else 'the model config'
    raise ModelConfigError(
        f'max_out_len (the answer length, from {where}) must be a positive number of tokens, '
        f'not {value!r}; set it there'
    )


def unknown_key_message(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(key), sorted(known), n=1)
    if close:
        return f'unknown setting {key!r}; did you mean {close[0]!r}?'
    return f'unknown setting {key!r}; the settings are {", ".join(sorted(known))}'


def init_parameters(cls: type) -> frozenset[str]:
    """The keyword arguments the ``__init__`` of ``cls`` and of its bases name (``**kwargs``
    passes the rest up the MRO)."""
    names = set()
    for klass in inspect.getmro(cls):
        init = klass.__dict__.get('__init__')
        if init is None or klass is object:
            continue
        for parameter in list(inspect.signature(init).parameters.values())[1:]:
            if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
                names.add(parameter.name)
    return frozenset(names)


def is_count(value: Any) -> bool:
    """A whole number (True and False are not)."""
    return isinstance(value, int) and not isinstance(value, bool)
