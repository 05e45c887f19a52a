"""Hugging Face transformers wrapper with LV-Eval's middle truncation (chat and base models)."""

from __future__ import annotations

from typing import Optional

from opencompass.models.huggingface_above_v4_33 import (
    HuggingFacewithChatTemplate,
    _get_stopping_criteria,
)
from opencompass.registry import MODELS

from .prompt_fitting import PromptFitting


@MODELS.register_module()
class LongContextHF(PromptFitting, HuggingFacewithChatTemplate):
    """OpenCompass's HF chat wrapper, but the prompt is cut in the middle on token ids to fit
    ``max_seq_len - max_out_len - template`` (OpenCompass truncates from the left first).

    ``chat=False`` serves base models: the prompt gets only the tokenizer's special tokens.
    """

    def __init__(
        self, path: str, chat: bool = True, chat_template_kwargs: Optional[dict] = None, **kwargs
    ) -> None:
        super().__init__(path=path, **kwargs)
        self.chat = chat
        self.chat_template_kwargs = chat_template_kwargs or {}

    def generate(
        self,
        inputs: list,
        max_out_len: int,
        min_out_len: Optional[int] = None,
        stopping_criteria: list[str] = [],
        **kwargs,
    ) -> list[str]:
        import torch

        batch = [self.fitted_ids(prompt, max_out_len) for prompt in inputs]
        width = max(map(len, batch))
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in batch])
        attention_mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in batch])
        generation_kwargs = {
            **self.generation_kwargs,
            **kwargs,
            'max_new_tokens': max_out_len,
            'pad_token_id': pad,
        }
        if min_out_len is not None:
            generation_kwargs['min_new_tokens'] = min_out_len
        stops = sorted(set(stopping_criteria + self.stop_words))
        if stops:
            generation_kwargs['stopping_criteria'] = _get_stopping_criteria(
                stops, self.tokenizer, len(batch)
            )
        device = self.model.device
        outputs = self.model.generate(
            input_ids=input_ids.to(device),
            attention_mask=attention_mask.to(device),
            **generation_kwargs,
        )
        texts = self.tokenizer.batch_decode(outputs[:, width:], skip_special_tokens=True)
        for stop in stops:
            texts = [text.split(stop)[0] for text in texts]
        return texts

    def get_ppl(self, inputs: list, mask_length: Optional[list[int]] = None):
        """Mean token negative log-likelihood of each text (OpenCompass's perplexity scoring),
        on the middle-truncated ids; with ``mask_length``, only the tokens after that many count.
        Texts are scored one by one: long contexts leave no room for batching."""
        import numpy as np
        import torch

        losses = []
        for number, prompt in enumerate(inputs):
            ids = self.fitted_ids(prompt, max_out_len=0, chat=False)
            input_ids = torch.tensor([ids], device=self.model.device)
            with torch.no_grad():
                logits = self.model(input_ids=input_ids).logits[0, :-1].float()
            token_losses = torch.nn.functional.cross_entropy(
                logits, input_ids[0, 1:], reduction='none'
            )
            if mask_length is not None:
                token_losses = token_losses[max(0, mask_length[number] - 1) :]
            losses.append(float(token_losses.mean()))
        return np.array(losses)
