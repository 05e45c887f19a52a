"""``ServedVLLM``: a ``LongContextVLLM`` whose answers come from the reply store, not an engine.

The serve-once runner gives every inference task of a served model this type in place of
``LongContextVLLM``; OpenCompass's inferencer then renders, batches and writes the predictions as
it always does, and each answer is looked up under ``plan.request_key`` of the ids this wrapper
builds (the same builder and sampling as in process): the prediction files are those of the
in-process run, the usage record's ``transport`` saying 'served'. No weights load. A key that is
not in the store is an error naming the record: the dispatch did not answer it.
"""

from __future__ import annotations

from opencompass.registry import MODELS

from ..files.errors import ModelConfigError
from ..models.base import LongContextModel, usage_record
from ..models.vllm import LongContextVLLM, sampling_settings
from .plan import request_key
from .store import ReplyStore


class MissingReply(ModelConfigError):
    """A request the dispatch left unanswered."""


@MODELS.register_module()
class ServedVLLM(LongContextVLLM):
    """``LongContextVLLM``'s inputs, answered from ``reply_store`` (``served_identity``: the
    model's ``plan.model_identity``, which the runner computed when it planned)."""

    engine_modules = ()  # answers from the store: no engine loads

    def __init__(
        self, path: str, max_seq_len: int, reply_store: str, served_identity: str, **kwargs
    ) -> None:
        LongContextModel.__init__(self, path=path, max_seq_len=max_seq_len, **kwargs)
        self.store, self.identity = ReplyStore(reply_store), served_identity

    def generate(
        self, inputs: list, max_out_len: int, stopping_criteria: list[str] = [], **kwargs
    ) -> list[str]:
        sampling = {
            **sampling_settings(
                self.stop_words, stopping_criteria, self.generation_kwargs, max_out_len
            ),
            **kwargs,
        }
        answers = []
        for prompt in inputs:
            item = self.input_ids(prompt, max_out_len)
            key = request_key(self.identity, item.ids, sampling)
            reply = self.store.get(key)
            if reply is None:
                raise MissingReply(
                    f'{self.settings.name}: no reply in {self.store.folder} for a prompt of '
                    f'{len(item.ids)} tokens (key {key}): the serving stage did not answer it; '
                    'run the inference stage again (-r keeps what was answered)'
                )
            answers.append(reply['text'])
            self.usage.append(
                usage_record(
                    sent=True,
                    prompt_tokens=reply['prompt_tokens'],
                    completion_tokens=reply['completion_tokens'],
                    local_prompt_tokens=len(item.ids),
                    prompt_tokens_match=reply['prompt_tokens'] == len(item.ids),
                    latency_s=reply['latency_s'],
                    cached=False,
                    truncated=item.truncated,
                    budget=item.budget,
                    transport='served',
                    cost_usd=None,
                )
            )
        return answers
