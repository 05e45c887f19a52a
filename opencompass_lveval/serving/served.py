"""``ServedVLLM``: a ``LongContextVLLM`` whose answers come from the reply store, not an engine.

The serve-once runner gives every inference task of a served model this type in place of
``LongContextVLLM``; OpenCompass's inferencer then renders, batches and writes the predictions as
it always does. Each prompt's request is found in the model's plan (``served_plan``) by the
digest of the rendered prompt and the sampling (``models.vllm.request_sampling``, as in
process), without tokenizing it again; its key is checked against the one made from the engine
(``served_identity``), the ids' digest and this sampling, and its reply read from the store with
every binding checked (``store.py``). The prediction files are those of the in-process run, the
usage record's ``transport`` saying 'served'. No weights load. A prompt the plan does not hold,
or a reply missing or not its own, is an error naming the record: a rerun with ``-r`` asks it.

The inferencer counts each prompt's tokens (``get_token_len_from_template``) to drop in-context
examples from prompts past the window; here the count is the planned ids' (the prompt as the
engine receives it), read from the plan: the plan renders prompts without in-context examples,
as LV-Eval's and Ada-LEval's configs are.
"""

from __future__ import annotations

from opencompass.registry import MODELS
from opencompass.utils.prompt import PromptList

from ..files.errors import ModelConfigError
from ..models.base import LongContextModel, usage_record
from ..models.vllm import LongContextVLLM, request_sampling
from .plan import PlanIndex
from .request import prompt_digest, request_key, served_model_name
from .store import ReplyStore


class MissingReplyError(ModelConfigError):
    """A request the serving stage left unanswered, or a prompt it did not plan."""


@MODELS.register_module()
class ServedVLLM(LongContextVLLM):
    """``LongContextVLLM``'s inputs, answered from ``reply_store`` (``served_identity``: the
    engine's ``request.engine_identity``; ``served_plan``: the folder of this model config's
    plan), both as the runner planned them."""

    engine_modules = ()  # answers from the store: no engine loads

    def __init__(
        self,
        path: str,
        max_seq_len: int,
        reply_store: str,
        served_identity: str,
        served_plan: str,
        **kwargs,
    ) -> None:
        LongContextModel.__init__(self, path=path, max_seq_len=max_seq_len, **kwargs)
        self.store, self.identity = ReplyStore(reply_store), served_identity
        self.plan = PlanIndex(served_plan)

    def get_token_len_from_template(self, templates, mode: str = 'ppl'):
        """The planned ids' count of a prompt, read from the plan (see the module)."""
        prompts = self.parse_template(templates, mode=mode)
        batched = isinstance(prompts, list) and not isinstance(prompts, PromptList)
        counts = []
        for prompt in prompts if batched else [prompts]:
            planned = self.plan.lengths.get(prompt_digest(prompt))
            counts.append(planned if planned is not None else self.get_token_len(str(prompt)))
        return counts if batched else counts[0]

    def generate(
        self, inputs: list, max_out_len: int, stopping_criteria: list[str] = [], **kwargs
    ) -> list[str]:
        sampling = request_sampling(
            self.stop_words, stopping_criteria, self.generation_kwargs, max_out_len, kwargs
        )
        model = served_model_name(self.identity)
        answers = []
        for prompt in inputs:
            planned, why = self.plan.find(prompt, sampling)
            if planned is None:
                raise MissingReplyError(
                    f'{self.settings.name}: a prompt of this task is not in the plan '
                    f'{self.plan.folder}: {why}; run the inference stage again'
                )
            key = request_key(self.identity, planned.digest, sampling)
            if key != planned.key:
                raise MissingReplyError(
                    f'{self.settings.name}: the plan in {self.plan.folder} was made for another '
                    'engine or sampling than this task asks: run the inference stage again'
                )
            expected = {
                'key': key,
                'prompt_digest': planned.digest,
                'model': model,
                'max_tokens': max_out_len,
                'prompt_tokens': planned.prompt_tokens,
            }
            reply, problem = self.store.read(expected)
            if reply is None:
                why = f'the stored one is not its answer ({problem})' if problem else 'none'
                raise MissingReplyError(
                    f'{self.settings.name}: no reply in {self.store.folder} for a prompt of '
                    f'{planned.prompt_tokens} tokens (key {key}): {why}; the serving stage did '
                    'not answer it: run the inference stage again (-r keeps what was answered)'
                )
            answers.append(reply['text'])
            self.usage.append(
                usage_record(
                    sent=True,
                    prompt_tokens=reply['prompt_tokens'],
                    completion_tokens=reply['completion_tokens'],
                    local_prompt_tokens=planned.prompt_tokens,
                    prompt_tokens_match=reply['prompt_tokens'] == planned.prompt_tokens,
                    latency_s=reply['latency_s'],
                    cached=False,
                    truncated=planned.truncated,
                    budget=planned.budget,
                    transport='served',
                    cost_usd=None,
                )
            )
        return answers
