"""What the long-context wrappers share: the model folder check, the tokenizer, the input builder,
and the checks that run before any weights load."""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from opencompass.models.base import BaseModel

from ..errors import ModelConfigError
from .formats import Format
from .inputs import InputBuilder, ModelInput
from .template import prompt_parser

LOCAL_PREFIXES = ('/', './', '../', '~')


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


def load_tokenizer(path: str, trust_remote_code: bool = False, **kwargs) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code, **kwargs)


class LongContextModel(BaseModel):
    """Subclasses load weights (``_load_weights``) and generate from ``self.input_ids(...)``.

    ``inputs``: 'exact' (default) or 'official' (the official LV-Eval prediction path, for
    comparing with published numbers); ``conversation``: an official format name
    (``formats.FORMATS``) where the tokenizer has no chat template or the paper fed another;
    ``max_length``: the official ``--model-max-length`` (default: the window in thousands less
    500); ``trust_remote_code`` is off unless a config turns it on.
    """

    is_api = False

    def __init__(
        self,
        path: str,
        max_seq_len: int,
        inputs: str = 'exact',
        chat: bool = True,
        conversation: Union[str, Format, None] = None,
        max_length: Optional[int] = None,
        chat_template_kwargs: Optional[dict] = None,
        tokenizer_path: Optional[str] = None,
        tokenizer_kwargs: Optional[dict] = None,
        trust_remote_code: bool = False,
        meta_template: Optional[dict] = None,
        generation_kwargs: Optional[dict] = None,
        stop_words: Optional[list[str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(
            path=check_model_path(path),
            max_seq_len=max_seq_len,
            meta_template=meta_template,
            generation_kwargs=generation_kwargs or {},
            **kwargs,
        )
        # Rounds keep their roles as in OpenCompass's chat wrappers; the user message is the
        # dataset's prompt with nothing added (template.py).
        self.template_parser = prompt_parser(meta_template)
        self.trust_remote_code = trust_remote_code
        self.builder = self.input_builder(
            path, max_seq_len, inputs, chat, conversation, max_length, chat_template_kwargs,
            tokenizer_path, tokenizer_kwargs, trust_remote_code,
        )  # fmt: skip
        self.tokenizer = self.builder.tokenizer
        eos = getattr(self.tokenizer, 'eos_token', None)
        self.stop_words = sorted(set((stop_words or []) + ([eos] if eos else [])))

    @staticmethod
    def input_builder(
        path: str,
        max_seq_len: int,
        inputs: str = 'exact',
        chat: bool = True,
        conversation: Union[str, Format, None] = None,
        max_length: Optional[int] = None,
        chat_template_kwargs: Optional[dict] = None,
        tokenizer_path: Optional[str] = None,
        tokenizer_kwargs: Optional[dict] = None,
        trust_remote_code: bool = False,
        **_ignored,
    ) -> InputBuilder:
        """The input builder a model config gets, from its tokenizer alone (no weights): what
        ``lveval inputs`` and the pre-run checks use."""
        tokenizer_source = check_model_path(tokenizer_path or path, 'tokenizer')
        tokenizer = load_tokenizer(tokenizer_source, trust_remote_code, **(tokenizer_kwargs or {}))
        return InputBuilder(
            tokenizer, max_seq_len, inputs, chat, conversation, max_length, chat_template_kwargs,
            name=str(path),
        )  # fmt: skip

    def input_ids(self, prompt: Any, max_out_len: int) -> ModelInput:
        return self.builder.build(prompt, max_out_len)

    def get_token_len(self, prompt: Any) -> int:
        """Tokens of the prompt as the model would see it before any cut."""
        return self.builder.untruncated_length(prompt)
