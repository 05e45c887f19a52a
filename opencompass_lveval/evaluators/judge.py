"""An LLM judge, independent of any benchmark: a rating prompt per sample goes to an
OpenAI-compatible model (``LongContextAPI``), the reply's ``[n]`` becomes the score n/10.

- ``parse_rating``: exactly one bracketed whole number from 0 to 10 (``[7]``, ``Rating: [3]``),
  the judge's own: text the reply copies from the prompt (an echo of it, the format example
  ``"[5]"`` included) is cut out first; anything else (``[11]``, ``[-1]``, ``[7.5]``, no
  brackets, two different ratings, a rating only inside the echo) is unparseable, reported with
  the reply, and never counted as a zero.
- ``Judge``: rates prompts at temperature 0, each verdict kept in its own cache (one JSON file
  per prompt, written atomically), so a killed run resumes and re-scoring costs nothing; the
  judge model is built only when a prompt is not in the cache. A verdict is keyed on what
  decides it (``judge_settings``: the judge's model, endpoint and generation settings, its name
  aside) and its prompt, so two judges under one name never share one; an entry is read only
  when the key it holds is the one looked up (entries written before, keyed by the judge's name
  alone, hold none and are never read). A damaged entry is asked again and counted.
- ``summarise``: the judge's score (mean rating x 10, in percent, over the rated samples), the
  counts in words, and its tokens and cost.
- ``spearman``: Spearman's rank correlation with average ranks for ties, for the agreement between
  the judge and a benchmark's own metric.

Benchmarks bring their prompts; this module fills nothing in itself.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
import re
import urllib.parse
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..files.cache import COUNT, JsonRecords
from ..files.errors import ApiError
from ..models.api_client import cost_usd

# The paper's judge (LV-Eval v2, appendix: GPT-4-0613 as auto rater). Prices: OpenAI's list
# prices for gpt-4-0613 in USD per 1M tokens. Any OpenAI-compatible model takes its place.
GPT4_0613_JUDGE = dict(
    type='LongContextAPI',
    abbr='gpt-4-0613',
    path='gpt-4-0613',
    url='https://api.openai.com/v1',
    key_env='OPENAI_API_KEY',
    max_seq_len=8192,
    tokenizer_path='cl100k_base',
    prices=dict(prompt=30.0, completion=60.0),
)
TEMPERATURE = 0.0
MAX_OUT_LEN = 64  # the rating comes first in the prompt's format; room for a short preamble
SHOWN_PROBLEMS = 20  # unparseable or failed samples listed in a result, with their replies

# Judge config keys that never change a verdict: its name, prices and key variable, and how its
# requests are paced, retried and cached. Every other key counts (an unknown one too).
NOT_DECIDING = frozenset(
    {
        'abbr',
        'prices',
        'key_env',
        'cache_dir',
        'concurrency',
        'timeout',
        'retry',
        'query_per_second',
    }
)

_BRACKETED = re.compile(r'\[([^\[\]\n]{0,16})\]')
_WHOLE = re.compile(r'\s*([+-]?\d+(?:\.\d*)?)\s*')


@dataclass(frozen=True)
class Rating:
    value: Optional[int]  # 0..10, None when the reply gives no usable rating
    problem: Optional[str] = None  # why not, in words


def _numbers(text: str) -> list[str]:
    """The numbers of the reply's bracketed numbers (``"[rating]"`` is no number)."""
    return [m.group(1) for b in _BRACKETED.finditer(text) if (m := _WHOLE.fullmatch(b.group(1)))]


def without_echo(text: str, prompt: str) -> str:
    """The reply with every copy of a prompt line that holds a bracketed number cut out (the
    format line's ``"[5]"``, a quoted response's brackets); a line that is nothing but a rating
    stays, since that is also how a judge answers."""
    lines = {line.strip() for line in prompt.splitlines() if _numbers(line)}
    for line in sorted(lines, key=len, reverse=True):
        if re.search(r'\w', _BRACKETED.sub('', line)):
            text = text.replace(line, '\n')  # a line break: no bracket spans the cut
    return text


def parse_rating(text: Any, prompt: str = '') -> Rating:
    """The ``[n]`` of a judge's reply to ``prompt``, after any echo of the prompt is cut out
    (``without_echo``). Bracketed text that is not a number (``"[rating]"``) is ignored; a number
    must be a whole number from 0 to 10; the same rating repeated counts once, two different
    ones are ambiguous."""
    if not isinstance(text, str):
        return Rating(None, f'reply is {type(text).__name__}, not text')
    numbers = _numbers(without_echo(text, prompt) if prompt else text)
    if not numbers:
        if prompt and _numbers(text):
            return Rating(
                None, 'no [n] rating of its own: its only [n] is in text copied from the prompt'
            )
        return Rating(None, 'no [n] rating in the reply')
    found = []
    for number in numbers:
        if not re.fullmatch(r'[+-]?\d+', number):
            return Rating(None, f'[{number}] is not a whole number')
        value = int(number)
        if not 0 <= value <= 10:
            return Rating(None, f'[{number}] is outside 0 to 10')
        found.append(value)
    if len(set(found)) > 1:
        return Rating(None, f'{len(found)} different ratings: {", ".join(f"[{v}]" for v in found)}')
    return Rating(found[0])


@dataclass(frozen=True)
class Verdict:
    """One sample's rating and what asking for it cost."""

    rating: Optional[int]
    problem: Optional[str]  # unparseable reply, or a failed request
    reply: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool  # answered from a cache (the judge's or the API model's): nothing paid now
    failed: bool = False  # the request failed for good (ApiError); not cached, asked again
    damaged_entry: Optional[str] = None  # its cache entry was unusable (why): asked again

    @property
    def score(self) -> Optional[float]:
        return None if self.rating is None else self.rating / 10


def endpoint(url: str) -> str:
    """A server's URL as the judge's settings hold it: without a user and password (a secret that
    decides no verdict) and without a trailing slash."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition('@')[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=host, path=parts.path.rstrip('/')))


def judge_settings(config: dict, max_out_len: int) -> dict:
    """What decides a verdict besides its prompt: the judge's config (model, endpoint, window,
    tokenizer, any generation settings: every key but ``NOT_DECIDING``) and the request's
    generation settings."""
    judge = {key: value for key, value in config.items() if key not in NOT_DECIDING}
    if isinstance(judge.get('url'), str):
        judge['url'] = endpoint(judge['url'])
    return {'judge': judge, 'max_out_len': max_out_len, 'temperature': TEMPERATURE}


def _import_path(value: Any) -> str:
    """A class or function of a config (``type=...``) by its import path, as mmengine dumps it;
    anything else JSON cannot hold by its repr."""
    name = getattr(value, '__qualname__', None)
    return f'{value.__module__}.{name}' if name else repr(value)


def settings_digest(settings: dict) -> str:
    """A digest of ``judge_settings``: results and cache entries name their judge by it."""
    text = json.dumps(settings, sort_keys=True, ensure_ascii=False, default=_import_path)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def verdict_key(digest: str, prompt: str) -> str:
    """The cache key of a judged prompt: a digest of the judge's settings digest and the prompt."""
    request = {'judge_settings': digest, 'prompt': prompt}
    return hashlib.sha256(json.dumps(request, ensure_ascii=False).encode()).hexdigest()


def build_judge_model(config: dict, cache_dir: Optional[str | os.PathLike] = None):
    """The judge model of a model config (``LongContextAPI`` unless ``type`` says otherwise);
    its own request cache goes to ``cache_dir`` unless the config names one."""
    config = dict(config)
    kind = config.pop('type', 'LongContextAPI')
    config.pop('abbr', None)
    if isinstance(kind, str):
        # Importing the module registers LongContextAPI in OpenCompass's MODELS.
        importlib.import_module('opencompass_lveval.models.api')
        from opencompass.registry import MODELS

        kind = MODELS.get(kind)
    if cache_dir is not None:
        config.setdefault('cache_dir', str(cache_dir))
    return kind(**config)


def judge_name(config: dict) -> str:
    return str(config.get('abbr') or config.get('path') or 'judge')


class Judge:
    """Rates prompts with a chat model: ``model`` is an object with ``chat(messages, max_out_len,
    temperature) -> ApiReply`` (``LongContextAPI``), or None to build it from ``config`` when
    a prompt first misses the cache."""

    def __init__(
        self,
        config: Optional[dict] = None,
        cache_dir: Optional[str | os.PathLike] = None,
        model: Any = None,
        max_out_len: int = MAX_OUT_LEN,
        concurrency: int = 4,
    ) -> None:
        self.config = dict(config if config is not None else GPT4_0613_JUDGE)
        self.name = judge_name(self.config)
        self.digest = settings_digest(judge_settings(self.config, max_out_len))
        self.prices = self.config.get('prices')
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.cache = None
        if self.cache_dir:
            counts = {'prompt_tokens': COUNT, 'completion_tokens': COUNT}
            self.cache = JsonRecords(self.cache_dir / 'verdicts', 'reply', fields=counts)
        self._model = model
        self.max_out_len = max_out_len
        self.concurrency = max(1, concurrency)

    @property
    def model(self):
        if self._model is None:
            # The model's request cache is the judge's too: one folder per judge's settings.
            requests = self.cache_dir / 'api' / self.digest if self.cache_dir else None
            self._model = build_judge_model(self.config, requests)
        return self._model

    def cached(self, prompt: str) -> tuple[Optional[Verdict], Optional[str]]:
        """(the cached verdict, None), (None, None) where there is none, or (None, why) where its
        entry is unusable: another key inside, or counts that are not whole numbers >= 0."""
        key = verdict_key(self.digest, prompt)
        stored, damage = self.cache.entry(key) if self.cache else (None, None)
        if stored is None:
            return None, damage
        where = self.cache.path(key)
        if stored.get('key') != key:
            return None, f'{where} holds another key than its name ({stored.get("key")!r})'
        for name in ('prompt_tokens', 'completion_tokens'):
            if not _whole(stored.get(name)):
                return None, f'{where}: {name} is {stored.get(name)!r}, not a whole number >= 0'
        counts = stored['prompt_tokens'], stored['completion_tokens']
        return _verdict(stored['reply'], *counts, prompt, cached=True), None

    def rate(self, prompt: str) -> Verdict:
        found, damage = self.cached(prompt)
        if found is not None:
            return found
        messages = [{'role': 'user', 'content': prompt}]
        try:
            reply = self.model.chat(messages, self.max_out_len, temperature=TEMPERATURE)
        except ApiError as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            problem = f'request failed: {message}'
            return Verdict(None, problem, '', 0, 0, False, failed=True, damaged_entry=damage)
        counts = _token_count(reply.prompt_tokens), _token_count(reply.completion_tokens)
        verdict = _verdict(reply.text, *counts, prompt, cached=bool(reply.cached))
        if self.cache:
            key = verdict_key(self.digest, prompt)
            self.cache.put(
                key,
                {
                    'key': key,
                    'reply': verdict.reply,
                    'prompt_tokens': verdict.prompt_tokens,
                    'completion_tokens': verdict.completion_tokens,
                },
            )
        return dataclasses.replace(verdict, damaged_entry=damage)

    def rate_all(self, prompts: Sequence[str]) -> list[Verdict]:
        """Verdicts in the order of the prompts; each is cached as soon as it arrives. A prompt
        that repeats (factrecall asks one question of every record; answers repeat) is asked
        once: its other samples share the verdict, as cached."""
        distinct = list(dict.fromkeys(prompts))
        if self.concurrency == 1 or len(distinct) < 2:
            verdicts = [self.rate(prompt) for prompt in distinct]
        else:
            with ThreadPoolExecutor(self.concurrency) as pool:
                verdicts = list(pool.map(self.rate, distinct))
        first = dict(zip(distinct, verdicts))
        seen: set[str] = set()
        shared = []
        for prompt in prompts:
            verdict = first[prompt]
            if prompt in seen and not verdict.failed:
                verdict = dataclasses.replace(verdict, cached=True, damaged_entry=None)
            seen.add(prompt)
            shared.append(verdict)
        return shared


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _token_count(value: Any) -> int:
    """A reply's token count; 0 where the model gave none it could count (-1, or no number)."""
    return value if _whole(value) else 0


def _verdict(
    text: str, prompt_tokens: int, completion_tokens: int, prompt: str, cached: bool
) -> Verdict:
    rating = parse_rating(text, prompt)
    return Verdict(rating.value, rating.problem, text, prompt_tokens, completion_tokens, cached)


def judge_score(verdicts: Sequence[Verdict]) -> Optional[float]:
    """Mean rating / 10 in percent, two decimals, over the rated samples; None if none is."""
    scores = [v.score for v in verdicts if v.score is not None]
    return round(100 * sum(scores) / len(scores), 2) if scores else None


def summarise(verdicts: Sequence[Verdict], judge: Judge) -> dict:
    """The judge's keys of a result: ``judge_score`` (a number, where any sample is rated),
    ``judge_diagnostics`` (counts in words, so OpenCompass's summarizer averages the score
    alone) and ``judge`` (the judge, counts, tokens, cost and the first problems)."""
    rated = sum(v.rating is not None for v in verdicts)
    failed = sum(v.failed for v in verdicts)
    unparseable = len(verdicts) - rated - failed
    cached = sum(v.cached for v in verdicts)
    prompt_tokens = sum(v.prompt_tokens for v in verdicts)
    completion_tokens = sum(v.completion_tokens for v in verdicts)
    paid = [v for v in verdicts if not v.cached]
    result: dict[str, Any] = {}
    score = judge_score(verdicts)
    if score is not None:
        result['judge_score'] = score
    damaged = [v.damaged_entry for v in verdicts if v.damaged_entry]
    result['judge_diagnostics'] = (
        f'{rated} rated, {unparseable} unparseable, {failed} failed requests, {cached} cached, '
        f'{len(verdicts)} samples, judge {judge.name}'
    ) + (f', {len(damaged)} damaged cache entries asked again' if damaged else '')
    result['judge'] = {
        'model': judge.name,
        'settings_digest': judge.digest,
        'samples': len(verdicts),
        'rated': rated,
        'unparseable': unparseable,
        'failed': failed,
        'cached': cached,
        'prompt_tokens': prompt_tokens,
        'completion_tokens': completion_tokens,
        'cost_usd': cost_usd(judge.prices, prompt_tokens, completion_tokens),
        'cost_usd_this_run': cost_usd(
            judge.prices,
            sum(v.prompt_tokens for v in paid),
            sum(v.completion_tokens for v in paid),
        ),
        'temperature': TEMPERATURE,
        'problems': [
            {'index': index, 'problem': v.problem, 'reply': v.reply[:200]}
            for index, v in enumerate(verdicts)
            if v.problem
        ][:SHOWN_PROBLEMS],
        'damaged_cache_entries': len(damaged),
        'damaged_cache_files': damaged[:SHOWN_PROBLEMS],
    }
    return result


# Agreement ---------------------------------------------------------------------------------------


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, smallest first; tied values share the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """Spearman's rank correlation: Pearson's on the average ranks. None with fewer than two
    pairs or where either side is constant (undefined)."""
    if len(xs) != len(ys):
        raise ValueError(f'spearman: {len(xs)} values against {len(ys)}')
    if len(xs) < 2:
        return None
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def order(scores: dict[str, float]) -> list[str]:
    """Names from the highest score down (ties by name)."""
    return sorted(scores, key=lambda name: (-scores[name], name))
