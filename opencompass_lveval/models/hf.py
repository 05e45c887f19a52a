"""Hugging Face transformers wrapper: the inputs of ``inputs.py`` (chat and base models)."""

from __future__ import annotations

from typing import Optional

from opencompass.models.huggingface_above_v4_33 import _get_stopping_criteria
from opencompass.registry import MODELS

from .base import LongContextModel


@MODELS.register_module()
class LongContextHF(LongContextModel):
    """transformers ``generate`` on the ids of ``InputBuilder`` (exact or official inputs).

    ``model_kwargs`` go to ``from_pretrained`` (default ``device_map='auto'`` and the checkpoint's
    dtype); ``rope_scaling`` (``rope_type``, ``factor``, ``original_max_position_embeddings``) is
    set on the model's config in the form the installed transformers reads, ``rope_theta`` kept.
    ``chat=False`` serves base models: the prompt gets only the tokenizer's special tokens.
    """

    engine_modules = ('torch', 'transformers')

    def __init__(
        self, path: str, max_seq_len: int, pad_token_id: Optional[int] = None, **kwargs
    ) -> None:
        super().__init__(path=path, max_seq_len=max_seq_len, **kwargs)
        self.model = self._load_weights(path, self.model_kwargs, self.rope_scaling)
        if pad_token_id is not None:
            self.pad_token_id = pad_token_id
        elif self.tokenizer.pad_token_id is not None:
            self.pad_token_id = self.tokenizer.pad_token_id
        else:
            self.pad_token_id = self.tokenizer.eos_token_id

    def _load_weights(self, path: str, model_kwargs: dict, rope_scaling: Optional[dict]):
        import transformers
        from transformers import AutoConfig, AutoModelForCausalLM

        from .rope import apply_to_hf_config

        config = AutoConfig.from_pretrained(path, trust_remote_code=self.trust_remote_code)
        if rope_scaling:
            apply_to_hf_config(config, rope_scaling, transformers.__version__)
        dtype_key = 'dtype' if int(transformers.__version__.split('.')[0]) >= 5 else 'torch_dtype'
        kwargs = {'device_map': 'auto', dtype_key: 'auto', **model_kwargs}
        model = AutoModelForCausalLM.from_pretrained(
            path, config=config, trust_remote_code=self.trust_remote_code, **kwargs
        )
        return model.eval()

    def generate(
        self,
        inputs: list,
        max_out_len: int,
        min_out_len: Optional[int] = None,
        stopping_criteria: list[str] = [],
        **kwargs,
    ) -> list[str]:
        import time

        import torch

        items = [self.input_ids(prompt, max_out_len) for prompt in inputs]
        batch = [item.ids for item in items]
        width = max(map(len, batch))
        pad = self.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in batch])
        attention_mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in batch])
        generation_kwargs = {
            'do_sample': False,
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
        started = time.perf_counter()
        outputs = self.model.generate(
            input_ids=input_ids.to(device),
            attention_mask=attention_mask.to(device),
            **generation_kwargs,
        )
        texts = self.tokenizer.batch_decode(outputs[:, width:], skip_special_tokens=True)
        for stop in stops:
            texts = [text.split(stop)[0] for text in texts]
        self.record_usage(items, self._generated(outputs[:, width:]), time.perf_counter() - started)
        return texts

    def _generated(self, rows) -> list[int]:
        """Ids generated per answer: up to and including the first end-of-sequence id (what
        follows it is padding), as vLLM and API servers count completion tokens."""
        eos = self.tokenizer.eos_token_id
        counts = []
        for row in rows.tolist():
            counts.append(row.index(eos) + 1 if eos in row else len(row))
        return counts

    def get_ppl(self, inputs: list, mask_length: Optional[list[int]] = None):
        """Mean token negative log-likelihood of each text (OpenCompass's perplexity scoring),
        on the text with the tokenizer's special tokens, cut in the middle to the window; with
        ``mask_length``, only the tokens after that many count. One text at a time: long contexts
        leave no room for batching."""
        import numpy as np
        import torch

        plain = self.base_builder()
        losses = []
        for number, prompt in enumerate(inputs):
            ids = plain.build(prompt, max_out_len=0).ids
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

    def base_builder(self):
        """The exact-mode builder of plain text (no chat framing), for perplexity scoring."""
        from .inputs import InputBuilder
        from .settings import InputSettings

        if not hasattr(self, '_base_builder'):
            settings = InputSettings(path=self.settings.path, window=self.max_seq_len, chat=False)
            self._base_builder = InputBuilder(self.tokenizer, settings)
        return self._base_builder
