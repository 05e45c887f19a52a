"""Requests to an OpenAI-compatible endpoint: bounded concurrency, retries that wait as told, and a
reply cache on disk.

- Concurrency: at most ``concurrency`` requests in flight per endpoint URL in one process, however
  many models or threads share it.
- Retries: a timeout, a refused or dropped connection (a reply cut off midway included), 408, 409, 429 and 5xx are retried up to ``retry``
  times, waiting the server's ``Retry-After`` where it gives one, else an exponential backoff with
  jitter. 401 / 403 (a refused key) and other 4xx (a request the server will never take, such as a
  context overflow) fail at once, with the server's message, in one line.
- Cache: each reply is stored under a hash of the request (route and the canonical body that is
  sent; never the key or the URL), so a killed run resumed with ``-r`` sends only what it had not been answered, and a
  server moved to another port still hits the cache.
- Keys: read from the environment variable the config names, at request time; a key is never
  stored on an object that is printed, logged, cached or written. What a server says back (an
  error, an answer) is redacted of every secret the client sends (the key, and a user and
  password in the URL, as they are and as their Basic header) before it is raised, logged,
  cached or written: a server may echo the key it refused.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import json
import os
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from ..cache import JsonRecords
from ..errors import ApiError, ModelConfigError

RETRIED_STATUS = frozenset({408, 409, 429})
REDACTED = '[redacted]'  # what stands where a secret was
CACHED_FIELDS = ('text', 'prompt_tokens', 'completion_tokens', 'latency_s', 'finish_reason')
_LIMITS: dict[str, threading.BoundedSemaphore] = {}
_LIMITS_LOCK = threading.Lock()


@dataclass(frozen=True)
class ApiReply:
    """One answer and what it cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    finish_reason: Optional[str] = None


def cost_usd(prices: Optional[dict], prompt_tokens: int, completion_tokens: int) -> Optional[float]:
    """US dollars for the tokens at ``prices`` (``prompt`` and ``completion``, USD per 1M
    tokens); None where no prices are given."""
    if not prices:
        return None
    return (
        prompt_tokens * prices.get('prompt', 0) + completion_tokens * prices.get('completion', 0)
    ) / 1e6


def check_prices(prices: Optional[dict], who: str) -> None:
    if prices is None:
        return
    if not isinstance(prices, dict) or set(prices) - {'prompt', 'completion'}:
        raise ModelConfigError(
            f'{who}: prices must be dict(prompt=USD per 1M tokens, completion=USD per 1M '
            f'tokens), not {prices!r}'
        )
    for name, value in prices.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ModelConfigError(f'{who}: prices[{name!r}] must be a number >= 0, not {value!r}')


def request_payload(body: dict) -> bytes:
    """A request body as sent: canonical JSON (sorted keys, compact, UTF-8 unescaped), so that
    the bytes sent are also what the cache key is made from, serialised once. Long strings (a
    prompt) are escaped on their UTF-8 bytes, which gives json's bytes three times faster than
    json's own escaping of a non-ASCII string."""
    long: list[bytes] = []

    def swap(value: Any) -> Any:
        if isinstance(value, str) and len(value) >= _LONG_STRING:
            escaped = _json_escaped(value)
            if escaped is not None:
                long.append(escaped)
                return f'\x00{len(long) - 1}\x00'
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, list) and not (value and type(value[0]) is int):  # not token ids
            return [swap(item) for item in value]
        return value

    pieces = _MARKER.split(_canonical(swap(body)))  # text, index, text, index, ..., text
    indices = [int(index) for index in pieces[1::2]]
    if sorted(indices) != list(range(len(long))):  # a string of the body looked like a marker
        return _canonical(body)
    joined = [pieces[0]]
    for at, index in enumerate(indices):
        joined += [b'"', long[index], b'"', pieces[2 * at + 2]]
    return b''.join(joined)


_LONG_STRING = 4096  # characters
_JSON_ESCAPES = (
    (b'\\', b'\\\\'),
    (b'"', b'\\"'),
    (b'\n', b'\\n'),
    (b'\r', b'\\r'),
    (b'\t', b'\\t'),
)
_OTHER_CONTROLS = bytes(c for c in range(32) if c not in b'\t\n\r')  # json writes \\u00XX
_MARKER = re.compile(rb'"\\u0000(\d+)\\u0000"')  # json's text of '\x00{index}\x00'


def _canonical(body: Any) -> bytes:
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(',', ':')).encode()


def _json_escaped(text: str) -> Optional[bytes]:
    """The inside of json's string for ``text``, as UTF-8; None where json's own escaping is as
    fast (text mostly beyond ASCII, such as Chinese), would write a \\u escape (a rare control
    character) or cannot encode it (a lone surrogate)."""
    try:
        data = text.encode('utf-8')
    except UnicodeEncodeError:
        return None
    if len(data) > 1.5 * len(text):
        return None
    for raw, escaped in _JSON_ESCAPES:
        data = data.replace(raw, escaped)
    return None if len(data.translate(None, _OTHER_CONTROLS)) != len(data) else data


def request_key(route: str, payload: bytes) -> str:
    """The cache key of a request: a hash of its route and payload (never the key or URL)."""
    return hashlib.sha256(route.encode() + b'\n' + payload).hexdigest()


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header (seconds, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _server_message(response, redact: Callable[[str], str]) -> str:
    """The error the server gave, in one line, redacted, short (cut after redacting: a secret
    across the cut would leave its head behind)."""
    try:
        payload = response.json()
        error = payload.get('error', payload) if isinstance(payload, dict) else payload
        message = (
            error.get('message', error.get('detail', error)) if isinstance(error, dict) else error
        )
    except ValueError:
        message = response.text
    return redact(' '.join(str(message).split()))[:300]


def redacted(text: str, secrets: list[str]) -> str:
    """``text`` with each of ``secrets`` (longest first) replaced by ``REDACTED``."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _usage_count(usage: dict, name: str) -> int:
    value = usage.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else -1


class EndpointClient:
    """POSTs JSON to one OpenAI-compatible base URL (see the module)."""

    def __init__(
        self,
        url: str,
        *,
        key_env: Optional[str] = None,
        timeout: float = 600.0,
        retry: int = 5,
        concurrency: int = 8,
        backoff_s: float = 1.0,
        max_wait_s: float = 120.0,
        cache_dir: Optional[str] = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(('http://', 'https://')):
            raise ModelConfigError(
                f'url must be an http(s) base URL such as http://HOST:PORT/v1, not {url!r}'
            )
        for name, value in (('retry', retry), ('concurrency', concurrency)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or value < (name == 'concurrency')
            ):
                raise ModelConfigError(
                    f'{name} must be a whole number >= {int(name == "concurrency")}, not {value!r}'
                )
        if key_env is not None and (not isinstance(key_env, str) or not key_env):
            raise ModelConfigError(f'key_env must name an environment variable, not {key_env!r}')
        self.url = url.rstrip('/')
        self.key_env, self.timeout, self.retry = key_env, timeout, retry
        self.backoff_s, self.max_wait_s = backoff_s, max_wait_s
        self.cache = JsonRecords(cache_dir, 'text') if cache_dir else None
        self._local = threading.local()
        self._random = random.Random()
        with _LIMITS_LOCK:
            self._limit = _LIMITS.setdefault(self.url, threading.BoundedSemaphore(concurrency))

    def check_key(self) -> None:
        """Fail before any request if the named key is not set."""
        if self.key_env and not os.environ.get(self.key_env):
            raise ModelConfigError(
                f'the API key variable {self.key_env} is not set: export {self.key_env}=... '
                'in the shell that runs OpenCompass (keys are never read from configs)'
            )

    def secrets(self) -> list[str]:
        """What this client sends that no message may hold: the key, read now (as set, and
        without the whitespace around it that an error about a malformed header shows it
        without), and a user and password in the URL (as written, decoded, and as the Basic
        credentials requests sends for them)."""
        found = [os.environ.get(self.key_env) or ''] if self.key_env else []
        parts = urllib.parse.urlsplit(self.url)
        if parts.username is not None or parts.password is not None:
            user, password = parts.username or '', parts.password or ''
            plain = [urllib.parse.unquote(user), urllib.parse.unquote(password)]
            basic = base64.b64encode(':'.join(plain).encode()).decode()
            found += [user, password, *plain, basic]
        return [form for value in found for form in {value, value.strip()} if form]

    def redact(self, text: str) -> str:
        """``text`` without any of this client's secrets."""
        return redacted(text, self.secrets())

    def _error(self, message: str) -> ApiError:
        """An error whose message holds none of this client's secrets."""
        return ApiError(self.redact(message))

    def _headers(self) -> dict:
        headers = {'Content-Type': 'application/json'}
        if self.key_env:
            self.check_key()
            headers['Authorization'] = f'Bearer {os.environ[self.key_env]}'
        return headers

    def _session(self):
        session = getattr(self._local, 'session', None)
        if session is None:
            import requests

            session = self._local.session = requests.Session()
        return session

    def _backoff(self, attempt: int) -> float:
        return min(self.max_wait_s, self.backoff_s * 2**attempt) * (0.5 + self._random.random() / 2)

    def _stored(self, key: Optional[str]) -> Optional[ApiReply]:
        stored = self.cache.get(key) if key else None
        if stored is None:
            return None
        return ApiReply(
            stored['text'],
            stored.get('prompt_tokens', -1),
            stored.get('completion_tokens', -1),
            stored.get('latency_s', 0.0),
            True,
            stored.get('finish_reason'),
        )

    def cached(self, route: str, body: dict) -> Optional[ApiReply]:
        """The cached reply to a request, or None (no cache, or not answered before)."""
        return self._stored(request_key(route, request_payload(body)) if self.cache else None)

    def complete(
        self, route: str, body: dict, what: str, before_send: Optional[Callable] = None
    ) -> ApiReply:
        """The reply to one request, from the cache where it was answered before; ``what``
        names the request in errors; ``before_send`` runs only when a request goes out (a rate
        limit)."""
        payload = request_payload(body)
        key = request_key(route, payload) if self.cache else None
        reply = self._stored(key)
        if reply is not None:
            return reply
        if before_send is not None:
            before_send()
        with self._limit:
            reply = self._post(
                route, payload, what, 'message' if route.startswith('chat') else 'text'
            )
        if key:
            self.cache.put(key, {name: getattr(reply, name) for name in CACHED_FIELDS})
        return reply

    def _post(self, route: str, payload: bytes, what: str, kind: str) -> ApiReply:
        import requests

        url = f'{self.url}/{route}'
        failure = ''
        for attempt in range(self.retry + 1):
            started = time.perf_counter()
            try:
                response = self._session().post(
                    url, data=payload, headers=self._headers(), timeout=self.timeout
                )
            except requests.RequestException as exc:  # timeouts, refused or broken connections
                failure = f'{type(exc).__name__} ({self.redact(" ".join(str(exc).split()))[:200]})'
                wait = self._backoff(attempt)
            else:
                latency = time.perf_counter() - started
                status = response.status_code
                if 200 <= status < 300:
                    return self._reply(response, latency, url, what, kind)
                message = _server_message(response, self.redact)
                if status in (401, 403):
                    source = (
                        f'the key in ${self.key_env}' if self.key_env else 'no key (key_env unset)'
                    )
                    raise self._error(
                        f'{url} refused {source} for {what}: HTTP {status} {message}; set a '
                        'valid key in that variable'
                    )
                if status not in RETRIED_STATUS and status < 500:
                    raise self._error(f'{url} rejected {what}: HTTP {status} {message}')
                failure = f'HTTP {status} {message}'
                told = _retry_after(response.headers.get('Retry-After'))
                wait = min(told, self.max_wait_s) if told is not None else self._backoff(attempt)
            if attempt < self.retry:
                time.sleep(wait)
        raise self._error(
            f'{url} did not answer {what} after {self.retry + 1} attempts: {failure}; check the '
            'server and resume the run with -r (answered requests are cached)'
        )

    def _reply(self, response, latency: float, url: str, what: str, kind: str) -> ApiReply:
        """The answer of a 2xx response (redacted: a server may echo the key in it)."""
        try:
            payload = response.json()
            choice = payload['choices'][0]
            text = choice['message']['content'] if kind == 'message' else choice['text']
        except (ValueError, KeyError, IndexError, TypeError):
            body = self.redact(' '.join(response.text.split()))[:200]
            raise self._error(
                f'{url} answered {what} with a body that is not an OpenAI completion: {body}'
            ) from None
        usage = payload.get('usage') if isinstance(payload.get('usage'), dict) else {}
        finish = choice.get('finish_reason')
        return ApiReply(
            self.redact(text) if isinstance(text, str) else '',
            _usage_count(usage, 'prompt_tokens'),
            _usage_count(usage, 'completion_tokens'),
            round(latency, 4),
            False,
            self.redact(finish) if isinstance(finish, str) else None,
        )
