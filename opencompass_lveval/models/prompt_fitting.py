"""What every long-context wrapper shares: OpenCompass inputs -> middle-truncated input ids."""

from __future__ import annotations

import json
from typing import Any, Optional

from opencompass.models.huggingface_above_v4_33 import (
    _convert_base_messages,
    _convert_chat_messages,
)

from ..truncation import PromptFrame, TruncationError, fit_prompt


class PromptFitting:
    """Mixin: ``self.tokenizer``, ``self.max_seq_len``, ``self.chat`` and
    ``self.chat_template_kwargs`` in, ``self.fitted_ids(input, max_out_len)`` out."""

    tokenizer: Any
    max_seq_len: int
    chat: bool = True
    chat_template_kwargs: Optional[dict] = None

    def fitted_ids(self, prompt: Any, max_out_len: int, chat: Optional[bool] = None) -> list[int]:
        """Input ids for one OpenCompass prompt (a string or a PromptList of rounds); ``chat``
        overrides the model's own framing (perplexity scoring reads plain text)."""
        if not self.max_seq_len:
            raise TruncationError(f'{type(self).__name__} needs max_seq_len (the model window)')
        text, frame = self._text_and_frame(prompt, chat, require_user=True)
        return fit_prompt(self.tokenizer, text, frame, self.max_seq_len, max_out_len)

    def get_token_len(self, prompt: Any) -> int:
        """Tokens of the prompt as the model would see it before truncation."""
        text, frame = self._text_and_frame(prompt)
        return len(frame) + len(self.tokenizer.encode(text, add_special_tokens=False))

    def _text_and_frame(
        self, prompt: Any, chat: Optional[bool] = None, require_user: bool = False
    ) -> tuple[str, PromptFrame]:
        """The text to truncate (the last message, or the whole prompt for base framing) and the
        frame around it; truncation needs that last message to be the user's."""
        if not (self.chat if chat is None else chat):
            return _convert_base_messages([prompt])[0], self._frame(None)
        messages = _convert_chat_messages([prompt])[0]
        if require_user and (not messages or messages[-1]['role'] != 'user'):
            raise TruncationError("the last message of a chat prompt must be the user's")
        return messages[-1]['content'], self._frame(messages[:-1])

    def _frame(self, history: Optional[list[dict]]) -> PromptFrame:
        """The frame for this history, computed once per distinct history."""
        cache = self.__dict__.setdefault('_frames', {})
        key = None if history is None else json.dumps(history, sort_keys=True)
        if key not in cache:
            cache[key] = (
                PromptFrame.for_base(self.tokenizer)
                if history is None
                else PromptFrame.for_chat(self.tokenizer, history, self.chat_template_kwargs)
            )
        return cache[key]
