"""What the long-context wrappers share: the model folder check, the tokenizer, the input builder,
and the checks that run before any weights load."""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Iterator, Mapping
from typing import Any, Optional

from opencompass.models.base import BaseModel

from ..files.errors import ModelConfigError
from .inputs import InputBuilder, ModelInput
from .limits import check_model_limits
from .settings import InputSettings, init_parameters
from .template import prompt_parser

LOCAL_PREFIXES = ('/', './', '../', '~')
# BaseModel's own arguments that the wrappers pass on as they are (tokenizer_only, sync_rank).
_BASE_MODEL_KEYS = tuple(
    name
    for name in list(inspect.signature(BaseModel.__init__).parameters)[1:]
    if name not in ('path', 'max_seq_len', 'meta_template', 'generation_kwargs')
)


def check_model_path(path: str, what: str = 'model') -> str:
    """A local-looking path (absolute, ``./``, ``../``, ``~``) must exist: say so in one line
    instead of letting Hugging Face read it as a malformed hub id."""
    if isinstance(path, str) and path.startswith(LOCAL_PREFIXES):
        folder = os.path.expanduser(path)
        if not os.path.isdir(folder):
            raise ModelConfigError(
                f'{what} folder {path} does not exist: put the model files there (e.g. '
                '`huggingface-cli download REPO --local-dir FOLDER` on a machine with internet) '
                'or fix `path` in the model config'
            )
        return folder
    return path


def usage_record(
    *,
    sent: bool,
    prompt_tokens: int,
    completion_tokens: int,
    local_prompt_tokens: int,
    prompt_tokens_match: Optional[bool],
    latency_s: float,
    cached: bool,
    truncated: bool,
    budget: int,
    transport: str,
    cost_usd: Optional[float],
    prefix_cached_tokens: Optional[int] = None,
) -> dict:
    """What every wrapper records beside a prediction (the infer task writes it, reports and
    leaderboards total it): one shape for API and in-process models, every field named.
    ``prefix_cached_tokens``: prompt tokens the engine's prefix cache spared from prefill, where
    the engine says (vLLM in process)."""
    return {
        'sent': sent,
        'prompt_tokens': prompt_tokens,
        'completion_tokens': completion_tokens,
        'local_prompt_tokens': local_prompt_tokens,
        'prompt_tokens_match': prompt_tokens_match,
        'latency_s': latency_s,
        'cached': cached,
        'truncated': truncated,
        'budget': budget,
        'transport': transport,
        'cost_usd': cost_usd,
        'prefix_cached_tokens': prefix_cached_tokens,
    }


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Hugging Face's offline mode while inside, whatever the environment said at import:
    ``local_files_only`` alone still lets huggingface_hub reach the hub (it fetches a registry
    for its user agent, with a 3 s timeout)."""
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


ALLOW_HUB = 'LVEVAL_ALLOW_HUB'


def hub_allowed() -> bool:
    """Whether the user let tokenizers download from the Hugging Face hub (``LVEVAL_ALLOW_HUB=1``);
    by default every command reads this machine alone and answers at once."""
    value = os.environ.get(ALLOW_HUB, '').strip()
    if value not in ('', '0', '1'):
        raise ModelConfigError(
            f'{ALLOW_HUB} is {value!r}: set it to 1 to let tokenizers download from the Hugging '
            'Face hub, or to 0 (or unset it) to read this machine alone'
        )
    return value == '1'


# Tokenizers loaded in this process: an inference task's check before the weights and the model
# it then builds read the same folder, and the second load (a second or more for a large
# vocabulary) is spared. Keyed by the folder's state, so a folder rewritten is read again.
_LOADED: dict[tuple, Any] = {}


def load_tokenizer(
    path: str, trust_remote_code: bool = False, offline: Optional[bool] = None, **kwargs
) -> Any:
    """A Hugging Face tokenizer from a folder or a hub id, loaded once per process. Offline (the
    default, unless ``hub_allowed``): from this machine alone (a folder, or the Hugging Face
    cache), at once; a hub id found nowhere is an error naming the fix, instead of a minute of
    retries and transformers' generic connection error."""
    offline = not hub_allowed() if offline is None else offline
    folder = os.path.expanduser(str(path))
    state = (
        tuple(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in os.scandir(folder)))
        if os.path.isdir(folder)
        else None
    )
    key = (str(path), state, trust_remote_code, offline, repr(sorted(kwargs.items())))
    if key not in _LOADED:
        _LOADED[key] = _load_tokenizer(path, trust_remote_code, offline, **kwargs)
    return _LOADED[key]


def _load_tokenizer(path: str, trust_remote_code: bool, offline: bool, **kwargs) -> Any:
    from transformers import AutoTokenizer

    if not offline:
        return AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code, **kwargs)
    try:
        with hub_offline():
            return AutoTokenizer.from_pretrained(
                path, trust_remote_code=trust_remote_code, local_files_only=True, **kwargs
            )
    except OSError:
        if os.path.isdir(os.path.expanduser(str(path))):
            raise  # a folder that is there but lacks files: transformers' message names them
        raise ModelConfigError(
            f'tokenizer {str(path)!r} is not on this machine (no such folder, not in the Hugging '
            'Face cache) and the hub is not asked: set path= (or tokenizer_path=) to a folder '
            f'holding its tokenizer files (`hf download {path} --local-dir FOLDER` where the hub '
            f'is reachable), or {ALLOW_HUB}=1 to download it'
        ) from None


@contextlib.contextmanager
def named_after(model_cfg: Mapping[str, Any]) -> Iterator[None]:
    """A model config's problems (``ModelConfigError``) start with its abbr, what a run and its
    logs call the model."""
    abbr = model_cfg.get('abbr')
    try:
        yield
    except ModelConfigError as exc:
        if not abbr or str(exc).startswith(f'{abbr}: '):
            raise
        raise ModelConfigError(f'{abbr}: {exc}') from exc


class LongContextModel(BaseModel):
    """Subclasses load weights (``_load_weights``) and generate from ``self.input_ids(...)``.

    The input settings (``settings.py``: ``inputs``, 'exact' by default or 'official' for
    comparing with published numbers; ``conversation``, an official format name where the
    tokenizer has no chat template or the paper fed another; ``max_length``, the official
    ``--model-max-length``; ``chat``, ``chat_template_kwargs``, ``tokenizer_path``,
    ``tokenizer_kwargs``; ``trust_remote_code``, off unless a config turns it on) are keyword
    arguments, checked once into ``self.settings``; an argument no class of the wrapper takes is
    an error naming the closest one. ``model_kwargs`` (how the weights load) and ``rope_scaling``
    (``rope.py``) are the subclasses'; the window and the tokenizer are checked against the
    model's config.json with them (``limits.py``) before any weights load.
    """

    is_api = False
    # The modules its weights load with: the driver checks them findable before any task starts
    # (runner/readiness.py), instead of a task failing on the import half a minute in.
    engine_modules: tuple[str, ...] = ()

    def __init__(
        self,
        path: str,
        max_seq_len: int,
        meta_template: Optional[dict] = None,
        generation_kwargs: Optional[dict] = None,
        stop_words: Optional[list[str]] = None,
        model_kwargs: Optional[dict] = None,
        rope_scaling: Optional[dict] = None,
        **kwargs,
    ) -> None:
        self.settings = InputSettings.from_config(
            {'path': path, 'max_seq_len': max_seq_len, **kwargs},
            accepted=init_parameters(type(self)),
        )
        self.model_kwargs, self.rope_scaling = dict(model_kwargs or {}), rope_scaling
        base = {key: kwargs[key] for key in _BASE_MODEL_KEYS if key in kwargs}
        super().__init__(
            path=check_model_path(path),
            max_seq_len=max_seq_len,
            meta_template=meta_template,
            generation_kwargs=generation_kwargs or {},
            **base,
        )
        # Rounds keep their roles as in OpenCompass's chat wrappers; the user message is the
        # dataset's prompt with nothing added (template.py).
        self.template_parser = prompt_parser(meta_template)
        self.trust_remote_code = self.settings.trust_remote_code
        self.builder = self.input_builder(self.settings)
        check_model_limits(self.settings, self.builder.tokenizer, rope_scaling, self.model_kwargs)
        self.tokenizer = self.builder.tokenizer
        eos = getattr(self.tokenizer, 'eos_token', None)
        self.stop_words = sorted(set((stop_words or []) + ([eos] if eos else [])))
        self.usage: list[dict] = []  # one record per generated answer, in order (infer task)

    def record_usage(
        self,
        items: list[ModelInput],
        completions: list[int],
        seconds: float,
        engine_outputs: Optional[list[Any]] = None,
    ) -> None:
        """A usage record per answer of a batch, in the shape of the API model's (``api.py``):
        the ids the model received (as the engine reports them, where it does: vLLM's
        ``RequestOutput``s, checked against the ids sent, with the prefill its prefix cache
        spared), the ids it generated, and the model's own time (its generate call) shared out."""
        for index, (item, completion) in enumerate(zip(items, completions)):
            output = None if engine_outputs is None else engine_outputs[index]
            received = None if output is None else list(output.prompt_token_ids)
            self.usage.append(
                usage_record(
                    sent=True,
                    prompt_tokens=len(item.ids) if received is None else len(received),
                    completion_tokens=completion,
                    local_prompt_tokens=len(item.ids),
                    prompt_tokens_match=None if received is None else received == item.ids,
                    latency_s=round(seconds / max(1, len(items)), 4),
                    cached=False,
                    truncated=item.truncated,
                    budget=item.budget,
                    transport='in-process',
                    cost_usd=None,
                    prefix_cached_tokens=getattr(output, 'num_cached_tokens', None),
                )
            )

    @classmethod
    def input_settings(cls, model_cfg: Mapping[str, Any]) -> InputSettings:
        """The input settings of a model config of this wrapper (``type`` and the keys OpenCompass
        takes itself included): what ``lveval inputs`` and the pre-run check read."""
        return InputSettings.from_config(model_cfg, accepted=init_parameters(cls))

    @classmethod
    def config_builder(
        cls, model_cfg: Mapping[str, Any], offline: Optional[bool] = None
    ) -> InputBuilder:
        """The input builder of a model config of this wrapper, checked against the model's
        config.json as the wrapper checks it: what ``lveval inputs`` and the pre-run check use.
        A problem's message starts with the config's abbr."""
        with named_after(model_cfg):
            settings = cls.input_settings(model_cfg)
            builder = cls.input_builder(settings, offline)
            scaling, model_kwargs = model_cfg.get('rope_scaling'), model_cfg.get('model_kwargs')
            check_model_limits(settings, builder.tokenizer, scaling, model_kwargs)
        return builder

    @staticmethod
    def input_builder(settings: InputSettings, offline: Optional[bool] = None) -> InputBuilder:
        """The input builder of these settings, from the tokenizer alone (no weights); a
        tokenizer that is not on this machine is an error at once (``load_tokenizer``)."""
        tokenizer_source = check_model_path(settings.tokenizer_path or settings.path, 'tokenizer')
        tokenizer = load_tokenizer(
            tokenizer_source,
            settings.trust_remote_code,
            offline,
            **(settings.tokenizer_kwargs or {}),
        )
        return InputBuilder(tokenizer, settings)

    def input_ids(self, prompt: Any, max_out_len: int) -> ModelInput:
        return self.builder.build(prompt, max_out_len)

    def get_token_len(self, prompt: Any) -> int:
        """Tokens of the prompt as the model would see it before any cut."""
        return self.builder.untruncated_length(prompt)
