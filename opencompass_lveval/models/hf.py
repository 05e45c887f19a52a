"""Hugging Face transformers wrapper with LV-Eval's middle truncation (chat and base models)."""
from __future__ import annotations

from typing import Optional

from opencompass.models.huggingface_above_v4_33 import (HuggingFacewithChatTemplate,
                                                        _get_stopping_criteria)

from .prompt_fitting import PromptFitting


class LongContextHF(PromptFitting, HuggingFacewithChatTemplate):
    """OpenCompass's HF chat wrapper, but the prompt is cut in the middle on token ids to fit
    ``max_seq_len - max_out_len - template`` (OpenCompass truncates from the left first).

    ``chat=False`` serves base models: the prompt gets only the tokenizer's special tokens.
    """

    def __init__(self, path: str, chat: bool = True, chat_template_kwargs: Optional[dict] = None,
                 **kwargs) -> None:
        super().__init__(path=path, **kwargs)
        self.chat = chat
        self.chat_template_kwargs = chat_template_kwargs or {}

    def generate(self, inputs: list, max_out_len: int, min_out_len: Optional[int] = None,
                 stopping_criteria: list[str] = [], **kwargs) -> list[str]:
        import torch
        batch = [self.fitted_ids(prompt, max_out_len) for prompt in inputs]
        width = max(map(len, batch))
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in batch])
        attention_mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in batch])
        generation_kwargs = {**self.generation_kwargs, **kwargs, 'max_new_tokens': max_out_len,
                             'pad_token_id': pad}
        if min_out_len is not None:
            generation_kwargs['min_new_tokens'] = min_out_len
        stops = sorted(set(stopping_criteria + self.stop_words))
        if stops:
            generation_kwargs['stopping_criteria'] = _get_stopping_criteria(stops, self.tokenizer,
                                                                            len(batch))
        device = self.model.device
        outputs = self.model.generate(input_ids=input_ids.to(device),
                                      attention_mask=attention_mask.to(device),
                                      **generation_kwargs)
        texts = self.tokenizer.batch_decode(outputs[:, width:], skip_special_tokens=True)
        for stop in stops:
            texts = [text.split(stop)[0] for text in texts]
        return texts
