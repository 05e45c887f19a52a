"""What every long-context wrapper shares: OpenCompass inputs -> middle-truncated input ids."""
from __future__ import annotations

import json
from typing import Any, Optional

from opencompass.models.huggingface_above_v4_33 import (_convert_base_messages,
                                                        _convert_chat_messages)

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
        if not (self.chat if chat is None else chat):
            text = _convert_base_messages([prompt])[0]
            return fit_prompt(self.tokenizer, text, self._frame(None), self.max_seq_len,
                              max_out_len)
        messages = _convert_chat_messages([prompt])[0]
        if not messages or messages[-1]['role'] != 'user':
            raise TruncationError('the last message of a chat prompt must be the user\'s')
        return fit_prompt(self.tokenizer, messages[-1]['content'], self._frame(messages[:-1]),
                          self.max_seq_len, max_out_len)

    def _frame(self, history: Optional[list[dict]]) -> PromptFrame:
        """The frame for this history, computed once per distinct history."""
        cache = self.__dict__.setdefault('_frames', {})
        key = None if history is None else json.dumps(history, sort_keys=True)
        if key not in cache:
            cache[key] = (PromptFrame.for_base(self.tokenizer) if history is None else
                          PromptFrame.for_chat(self.tokenizer, history, self.chat_template_kwargs))
        return cache[key]

    def get_token_len(self, prompt: Any) -> int:
        """Tokens of the prompt as the model would see it before truncation."""
        if not self.chat:
            return len(self._frame(None)) + len(self.tokenizer.encode(
                _convert_base_messages([prompt])[0], add_special_tokens=False))
        messages = _convert_chat_messages([prompt])[0]
        return len(self._frame(messages[:-1])) + len(
            self.tokenizer.encode(messages[-1]['content'], add_special_tokens=False))
