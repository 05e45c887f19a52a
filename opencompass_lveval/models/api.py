"""``LongContextAPI``: a model behind an OpenAI-compatible endpoint, with the inputs of the offline
wrappers.

The request for each prompt comes from ``api_inputs.py`` (token ids, messages or text; exact or
official inputs), goes out through ``api_client.py`` (bounded concurrency, retries, a reply cache
on disk, the key from the environment), and every answer leaves a usage record: the server's
prompt and completion tokens, the local count and whether they agree, latency, whether it was
cached or cut, and its cost where prices are given. ``LongContextInferTask`` writes the records
into the predictions file beside each prediction; ``lveval report`` and ``lveval leaderboard``
total them per model and level.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, Optional

from opencompass.models.base_api import BaseAPIModel
from opencompass.registry import MODELS

from ..files.errors import ModelConfigError
from .api_client import (
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_MAX_WAIT_S,
    DEFAULT_TIMEOUT_S,
    ApiReply,
    EndpointClient,
    check_prices,
    cost_usd,
)
from .api_inputs import ApiInputBuilder, ApiRequest, TiktokenTokenizer, is_tiktoken_name
from .base import check_model_path, load_tokenizer, usage_record
from .settings import InputSettings, init_parameters
from .template import prompt_parser

__all__ = ['ApiReply', 'LongContextAPI', 'cost_usd']


@MODELS.register_module()
class LongContextAPI(BaseAPIModel):
    """Any OpenAI-compatible endpoint (``url``, e.g. ``http://127.0.0.1:8000/v1``), ``path``
    being the model id the server knows.

    ``tokenizer_path``: a tiktoken encoding name for a closed API (``cl100k_base`` for the GPT
    rows), else the served model's tokenizer folder (``path`` where that is a folder).
    ``prompt_ids``: send the offline wrappers' exact ids to ``/v1/completions`` (vLLM, SGLang).
    ``system_prompt``: a system message before the prompt. ``official``: which paper's official
    API code ``inputs='official'`` follows for a closed API ('lveval' or 'adaleval').
    ``key_env``: the environment variable holding the key (None: no key). ``prices``: USD per 1M
    tokens, ``dict(prompt=..., completion=...)``. ``cache_dir``: the reply cache (the infer task
    puts it in the work folder). ``concurrency``: requests in flight per endpoint;
    ``query_per_second``: OpenCompass's rate limit. Limits of each request (``api_client.py``):
    ``timeout``, seconds for one attempt, connecting and the whole reply (600); ``retry``, attempts
    after the first (5); ``max_wait_s``, the longest wait before a retry, a Retry-After included
    (120); ``max_reply_bytes``, the most of a reply that is read (16 MiB). The input settings of ``settings.py``
    (``inputs``, ``chat``, ``conversation``, ``max_length``...) mean what they mean offline.
    """

    is_api = True

    def __init__(
        self,
        path: str,
        max_seq_len: int,
        url: str,
        key_env: Optional[str] = None,
        prompt_ids: bool = False,
        system_prompt: Optional[str] = None,
        official: Optional[str] = None,
        prices: Optional[dict] = None,
        cache_dir: Optional[str] = None,
        concurrency: int = 8,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: int = 5,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        query_per_second: float = 10,
        meta_template: Optional[dict] = None,
        generation_kwargs: Optional[dict] = None,
        **kwargs,
    ) -> None:
        config = {
            'path': path,
            'max_seq_len': max_seq_len,
            'url': url,
            'key_env': key_env,
            'prompt_ids': prompt_ids,
            'system_prompt': system_prompt,
            'official': official,
            **kwargs,
        }
        self.settings = InputSettings.from_config(config, accepted=init_parameters(type(self)))
        super().__init__(
            path=path,
            query_per_second=query_per_second,
            retry=retry,
            max_seq_len=max_seq_len,
            meta_template=meta_template,
            generation_kwargs=dict(generation_kwargs or {}),
        )
        check_prices(prices, self.settings.name)
        try:
            self.client = EndpointClient(
                url,
                key_env=key_env,
                timeout=timeout,
                retry=retry,
                concurrency=concurrency,
                max_wait_s=max_wait_s,
                max_reply_bytes=max_reply_bytes,
                cache_dir=cache_dir,
            )
            self.client.check_key()
        except ModelConfigError as exc:
            raise ModelConfigError(f'{self.settings.name}: {exc}') from None
        self.template_parser = prompt_parser(meta_template)
        self.builder = self.request_builder(config)
        self.prices, self.concurrency = prices, concurrency
        self.usage: list[dict] = []  # one record per answered prompt, in order
        self.sample_offset = 0  # the index of the next prompt's sample (set by the infer task)

    @classmethod
    def request_builder(
        cls, model_cfg: Mapping[str, Any], offline: Optional[bool] = None
    ) -> ApiInputBuilder:
        """The request builder of a model config (its tokenizer alone is loaded): what the
        wrapper, ``lveval inputs`` and the pre-run check use; ``offline`` as for
        ``load_tokenizer``."""
        settings = InputSettings.from_config(model_cfg, accepted=init_parameters(cls))
        source = settings.tokenizer_path or settings.path
        if is_tiktoken_name(source):
            tokenizer = TiktokenTokenizer(source)
        elif settings.tokenizer_path or str(settings.path).startswith(('/', './', '../', '~')):
            folder = check_model_path(source, 'tokenizer')
            tokenizer = load_tokenizer(
                folder, settings.trust_remote_code, offline, **(settings.tokenizer_kwargs or {})
            )
        else:
            raise ModelConfigError(
                f'{settings.name}: an API model needs tokenizer_path: a tiktoken encoding '
                "('cl100k_base' for OpenAI's GPT-3.5/GPT-4 rows) or the served model's tokenizer "
                'folder, so that cuts and counts are exact'
            )
        return ApiInputBuilder(
            settings,
            tokenizer,
            model_id=settings.path,
            prompt_ids=bool(model_cfg.get('prompt_ids', False)),
            system_prompt=model_cfg.get('system_prompt'),
            official=model_cfg.get('official'),
        )

    # OpenCompass's model interface ------------------------------------------------------------

    def generate(self, inputs: list, max_out_len: int, **kwargs) -> list[str]:
        """The answers to a batch, ``concurrency`` requests at a time, in order. Requests are
        built (tokenized, cut, serialised) by at most one thread per core and sent by up to
        ``concurrency``: tokenizing is CPU work, and a tokenizer's working memory (tiktoken keeps
        one per thread) then grows with the cores, not with the requests in flight."""
        first = self.sample_offset + len(self.usage)
        jobs = [(first + i, prompt) for i, prompt in enumerate(inputs)]
        workers = min(len(jobs), self.concurrency)
        if workers <= 1:
            answered = [self._answer(*job, max_out_len) for job in jobs]
        else:
            builders = min(workers, os.cpu_count() or 1)
            with (
                ThreadPoolExecutor(max_workers=builders) as building,
                ThreadPoolExecutor(max_workers=workers) as sending,
            ):

                def answer(job):
                    return self._answer(*job, max_out_len, build=building)

                answered = list(sending.map(answer, jobs))
        records = [record for _, record in answered]
        self.usage.extend(records)
        differing = [r for r in records if r['prompt_tokens_match'] is False]
        if differing:
            self.logger.warning(
                f'{self.settings.name}: the server counted other prompt tokens than the local '
                f'count for {len(differing)} of {len(records)} requests (first: server '
                f'{differing[0]["prompt_tokens"]}, local {differing[0]["local_prompt_tokens"]}); '
                'the predictions file records both per sample'
            )
        return [text for text, _ in answered]

    def get_token_len(self, prompt: Any) -> int:
        return self.builder.untruncated_tokens(prompt)

    # Requests ---------------------------------------------------------------------------------

    def _answer(
        self, index: int, prompt: Any, max_out_len: int, build: Optional[Executor] = None
    ) -> tuple[str, dict]:
        """One prompt's answer and usage record (``build``: the threads that build requests)."""
        arguments = (prompt, max_out_len, self.generation_kwargs)
        if build is None:
            request = self.builder.request(*arguments)
        else:
            request = build.submit(self.builder.request, *arguments).result()
        if request.answer is not None:  # the official code answered without a request
            return request.answer, self._record(request, None)
        what = (
            f'sample {index} ({request.local_tokens} prompt tokens counted here, window '
            f'{self.settings.window}, {request.transport})'
        )
        # OpenCompass's rate limit applies to the requests that go out, not to cached replies.
        reply = self.client.complete(request.route, request.body, what, before_send=self.wait)
        return reply.text, self._record(request, reply)

    def _record(self, request: ApiRequest, reply: Optional[ApiReply]) -> dict:
        """The usage record of one answer (``reply`` None: answered without a request)."""
        sent = reply if reply is not None else ApiReply('', 0, 0, 0.0, False)
        known = reply is not None and reply.prompt_tokens >= 0
        return usage_record(
            sent=reply is not None,
            prompt_tokens=sent.prompt_tokens,
            completion_tokens=sent.completion_tokens,
            local_prompt_tokens=request.local_tokens,
            prompt_tokens_match=(sent.prompt_tokens == request.local_tokens) if known else None,
            latency_s=sent.latency_s,
            cached=sent.cached,
            truncated=request.truncated,
            budget=request.budget,
            transport=request.transport,
            cost_usd=cost_usd(
                self.prices, max(sent.prompt_tokens, 0), max(sent.completion_tokens, 0)
            ),
        )

    def cached_record(self, prompt: Any, max_out_len: int) -> Optional[dict]:
        """The usage record of a prompt answered in an earlier, killed run (from the cache), or
        None where it is not cached: for predictions a resumed run did not ask again."""
        request = self.builder.request(prompt, max_out_len, self.generation_kwargs)
        if request.answer is not None:
            return self._record(request, None)
        reply = self.client.cached(request.route, request.body)
        return None if reply is None else self._record(request, reply)

    def request_body(self, prompt: Any, max_out_len: int) -> dict:
        """The body this model sends for a dataset's prompt (before the template parser): what a
        two-call answer's prediction file shows of its second call."""
        parsed = self.parse_template(prompt, mode='gen')
        return self.builder.request(parsed, max_out_len, self.generation_kwargs).body

    def chat(self, messages: list[dict], max_out_len: int, temperature: float = 0.0) -> ApiReply:
        """One chat request of given messages, as they are (no cut): for a judge."""
        body = {
            'model': self.settings.path,
            'messages': messages,
            'max_tokens': max_out_len,
            'temperature': temperature,
        }
        return self.client.complete('chat/completions', body, f'a chat of {len(messages)} messages')


def default_cache_dir(work_dir: str, abbr: str) -> str:
    """Where a run's replies are cached when the config names no folder: inside the work folder,
    so ``-r`` (which reuses it) finds them."""
    return os.path.join(work_dir, 'api_cache', abbr)
