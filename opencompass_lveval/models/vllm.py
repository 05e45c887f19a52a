"""vLLM wrapper with LV-Eval's middle truncation; vLLM itself is imported only to load a model."""

from __future__ import annotations

from typing import Any, Optional

from opencompass.models.base import BaseModel
from opencompass.registry import MODELS

from .prompt_fitting import PromptFitting


def load_engine(path: str, model_kwargs: dict) -> tuple[Any, Any]:
    """(vllm.LLM engine, vllm.SamplingParams); the one place that imports vLLM."""
    try:
        from vllm import LLM, SamplingParams
    except ImportError as exc:
        raise ImportError(
            'LongContextVLLM needs vLLM: pip install "opencompass_lveval[vllm]", '
            'or use LongContextHF'
        ) from exc
    return LLM(path, **model_kwargs), SamplingParams


@MODELS.register_module()
class LongContextVLLM(PromptFitting, BaseModel):
    """vLLM, greedy, with prompts middle-truncated on token ids to fit the window.

    OpenCompass's vLLM chat wrapper sends over-long prompts as they are and vLLM rejects them;
    here every prompt is cut to ``max_seq_len - max_out_len - chat template`` tokens and sent as
    token ids, so vLLM never re-tokenizes. ``max_seq_len`` also becomes vLLM's ``max_model_len``
    unless ``model_kwargs`` sets it.
    """

    is_api = False

    def __init__(
        self,
        path: str,
        max_seq_len: int,
        model_kwargs: Optional[dict] = None,
        generation_kwargs: Optional[dict] = None,
        meta_template: Optional[dict] = None,
        chat: bool = True,
        chat_template_kwargs: Optional[dict] = None,
        stop_words: Optional[list[str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(
            path=path,
            max_seq_len=max_seq_len,
            meta_template=meta_template,
            generation_kwargs=generation_kwargs or {},
            **kwargs,
        )
        self.chat = chat
        self.chat_template_kwargs = chat_template_kwargs or {}
        model_kwargs = {
            'max_model_len': max_seq_len,
            'trust_remote_code': True,
            **(model_kwargs or {}),
        }
        self.engine, self._sampling_params = load_engine(path, model_kwargs)
        self.tokenizer = self.engine.get_tokenizer()
        eos = getattr(self.tokenizer, 'eos_token', None)
        self.stop_words = sorted(set((stop_words or []) + ([eos] if eos else [])))

    def generate(
        self, inputs: list, max_out_len: int, stopping_criteria: list[str] = [], **kwargs
    ) -> list[str]:
        prompts = [{'prompt_token_ids': self.fitted_ids(prompt, max_out_len)} for prompt in inputs]
        sampling = {
            'temperature': 0,
            'max_tokens': max_out_len,
            'stop': sorted(set(self.stop_words + stopping_criteria)),
            **self.generation_kwargs,
            **kwargs,
        }
        outputs = self.engine.generate(prompts, self._sampling_params(**sampling), use_tqdm=False)
        return [output.outputs[0].text for output in outputs]
