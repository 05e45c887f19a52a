"""Requests to an OpenAI-compatible endpoint: bounded concurrency, retries that wait as told, every
request bounded in time and size, and a reply cache on disk.

- Concurrency: at most ``concurrency`` requests in flight per endpoint URL in one process, however
  many models or threads share it.
- Retries: a timeout, a refused or dropped connection (a reply cut off midway included), 408, 409,
  429 and 5xx are retried up to ``retry`` times, waiting the server's ``Retry-After`` where it
  gives one, else an exponential backoff with jitter, never longer than ``max_wait_s``. 401 / 403
  (a refused key) and other 4xx (a request the server will never take, such as a context overflow)
  fail at once, with the server's message, in one line.
- Bounds: each attempt ends within ``timeout`` seconds, connecting and the whole reply included
  (``deadline.py``: a server that sends a byte a second is cut off); a reply is counted while it
  is read and refused past ``max_reply_bytes``. A redirect is an error naming where it points,
  never followed (requests would turn the POST into a GET to another host). An answer that is not
  text (null, a number) is an error; OpenAI's content parts are joined.
- Settings that no request could keep (a URL with no host or an impossible port, ``timeout=None``)
  are refused when the client is built, not retried as outages.
- Cache: each reply is stored under a hash of the request (route and the canonical body that is
  sent; never the key or the URL), so a killed run resumed with ``-r`` sends only what had not
  been answered, and a server moved to another port still hits the cache. Only whole, typed
  entries count (``cache.py``).
- Keys: read from the environment variable the config names, at request time, and refused unless
  printable ASCII (a header can carry nothing else); a key is never stored on an object that is
  printed, logged, cached or written. What a server says back (an error, an answer, a redirect's
  target) is redacted of every secret the client sends (the key, and a user and password in the
  URL, as they are and as their Basic header), in every form it can come back in
  (``redaction.py``), before it is raised, logged, cached or written.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import math
import os
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from ..files.cache import COUNT, OPTIONAL_TEXT, SECONDS, JsonRecords
from ..files.errors import ApiError, ModelConfigError
from .redaction import key_problem, redacted, secret_forms, shown_url, url_secrets

RETRIED_STATUS = frozenset({408, 409, 429})
DEFAULT_TIMEOUT_S = 600.0  # one attempt, connecting and the whole reply
DEFAULT_MAX_WAIT_S = 120.0  # the longest wait before a retry, a Retry-After included
DEFAULT_MAX_REPLY_BYTES = 16 * 2**20  # an answer of 100k tokens is a few MB of JSON
CACHED_FIELDS = ('text', 'prompt_tokens', 'completion_tokens', 'latency_s', 'finish_reason')
# The types a cache entry's fields must have (besides its text), as this client writes them.
CACHED_SHAPE = {
    'prompt_tokens': COUNT,
    'completion_tokens': COUNT,
    'latency_s': SECONDS,
    'finish_reason': OPTIONAL_TEXT,
}
_READ_CHUNK = 256 * 1024  # bytes a reply is read in
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
    """A request body as sent: compact JSON, UTF-8 unescaped, its keys in the order the request
    builder put them (an official path's order: what its client sent), so that the bytes sent
    are also what the cache key is made from, serialised once. Long strings (a
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
    return json.dumps(body, ensure_ascii=False, separators=(',', ':')).encode()


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


def _one_line(text: str | bytes, redact: Callable[[str], str], length: int) -> str:
    """What a server sent, redacted, then in one line and short (redacted first: a secret across
    the cut would leave its head behind, and one across a run of spaces would be joined up)."""
    if isinstance(text, bytes):
        text = text.decode('utf-8', 'replace')
    return ' '.join(redact(text).split())[:length]


def _server_message(body: bytes, redact: Callable[[str], str]) -> str:
    """The error the server gave (its JSON ``error.message`` or ``detail``, else its text)."""
    try:
        payload = json.loads(body)
    except ValueError:
        return _one_line(body, redact, 300)
    error = payload.get('error', payload) if isinstance(payload, dict) else payload
    message = error.get('message', error.get('detail', error)) if isinstance(error, dict) else error
    return _one_line(str(message), redact, 300)


def _usage_count(usage: dict, name: str) -> int:
    value = usage.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else -1


def _answer_text(content: Any) -> Optional[str]:
    """The text of an answer: a string, or OpenAI's content parts (``[{'type': 'text', 'text':
    ...}, ...]``) joined; None for anything else (null, a number, a part that is no text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get('type') == 'text' and isinstance(part.get('text'), str)
        for part in content
    ):
        return ''.join(part['text'] for part in content)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_LIMIT_RULES = {
    'timeout': (
        'a number of seconds > 0: the deadline of one attempt (connecting, sending, the whole reply)',
        lambda value: _is_number(value) and value > 0,
    ),
    'max_wait_s': (
        'a number of seconds >= 0: the longest wait before a retry, a Retry-After included',
        lambda value: _is_number(value) and value >= 0,
    ),
    'max_reply_bytes': (
        'a whole number of bytes >= 1: the most of a reply that is read',
        lambda value: _is_count(value) and value >= 1,
    ),
    'backoff_s': ('a number of seconds >= 0', lambda value: _is_number(value) and value >= 0),
    'retry': ('a whole number >= 0', lambda value: _is_count(value) and value >= 0),
    'concurrency': ('a whole number >= 1', lambda value: _is_count(value) and value >= 1),
}


def check_limits(**limits: Any) -> None:
    """Refuse, when a model is built, a limit that no request could keep (``timeout=None``, a
    negative wait, a size that is no number of bytes)."""
    for name, value in limits.items():
        what, good = _LIMIT_RULES[name]
        if not good(value):
            raise ModelConfigError(f'{name} must be {what}, not {value!r}')


_EXAMPLE = 'http://HOST:PORT/v1'


def checked_url(url: Any) -> str:
    """``url`` without a trailing '/', or an error saying why no request could reach it (what
    would otherwise be retried as an outage); a user and password in it are not shown."""
    if not isinstance(url, str):
        raise ModelConfigError(f'url must be an http(s) base URL such as {_EXAMPLE}, not {url!r}')
    try:
        parts = urllib.parse.urlsplit(url)
        problem = _url_problem(url, parts, parts.port)
    except ValueError as exc:  # urllib's words: 'Port out of range 0-65535', 'Invalid IPv6 URL'
        problem = (
            'has a port that is not a number from 1 to 65535'
            if 'port' in str(exc).lower()
            else f'cannot be parsed ({exc})'
        )
    if problem:
        raise ModelConfigError(
            f'url must be an http(s) base URL such as {_EXAMPLE}; {shown_url(url)!r} {problem}'
        )
    return url.rstrip('/')


def _url_problem(url: str, parts: urllib.parse.SplitResult, port: Optional[int]) -> str:
    if parts.scheme not in ('http', 'https') or '://' not in url:
        return 'does not start with http:// or https://'
    if any(char.isspace() or not char.isprintable() for char in url):
        return 'holds a space or a control character'
    if not parts.hostname:
        return 'names no host'
    if port == 0:
        return 'has port 0, which no server listens on'
    if parts.query or parts.fragment:
        return "has a query or fragment ('?' or '#'), which the route would be appended to"
    if parts.path.rstrip('/').endswith('completions'):
        return 'ends with the route, which the client adds itself (chat/completions, completions)'
    return ''


class EndpointClient:
    """POSTs JSON to one OpenAI-compatible base URL (see the module)."""

    def __init__(
        self,
        url: str,
        *,
        key_env: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: int = 5,
        concurrency: int = 8,
        backoff_s: float = 1.0,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        cache_dir: Optional[str] = None,
    ) -> None:
        self.url = checked_url(url)
        check_limits(
            timeout=timeout,
            max_wait_s=max_wait_s,
            max_reply_bytes=max_reply_bytes,
            backoff_s=backoff_s,
            retry=retry,
            concurrency=concurrency,
        )
        if key_env is not None and (not isinstance(key_env, str) or not key_env):
            raise ModelConfigError(f'key_env must name an environment variable, not {key_env!r}')
        self.key_env, self.timeout, self.retry = key_env, timeout, retry
        self.backoff_s, self.max_wait_s = backoff_s, max_wait_s
        self.max_reply_bytes = max_reply_bytes
        self.cache = None
        if cache_dir:
            self.cache = JsonRecords(
                cache_dir, 'text', fields=CACHED_SHAPE, max_bytes=max_reply_bytes + 4096
            )
        self._url_secrets = url_secrets(self.url)
        self._local = threading.local()
        self._random = random.Random()
        with _LIMITS_LOCK:
            self._limit = _LIMITS.setdefault(self.url, threading.BoundedSemaphore(concurrency))

    def check_key(self) -> None:
        """Fail before any request if the named key is not set, or cannot be sent."""
        if not self.key_env:
            return
        key = os.environ.get(self.key_env)
        if not key:
            raise ModelConfigError(
                f'the API key variable {self.key_env} is not set: export {self.key_env}=... '
                'in the shell that runs OpenCompass (keys are never read from configs)'
            )
        problem = key_problem(key)
        if problem:
            raise ModelConfigError(
                f'the API key variable {self.key_env} holds {problem}: an HTTP header cannot '
                f'carry it; set {self.key_env} to the key alone (printable ASCII)'
            )

    def secrets(self) -> list[str]:
        """What this client sends that no message may hold, in every form a server may send it
        back (``redaction.secret_forms``): the key, read now, and a user and password in the
        URL."""
        found = [os.environ.get(self.key_env) or ''] if self.key_env else []
        return [
            form for value in found + self._url_secrets if value for form in secret_forms(value)
        ]

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
            from .deadline import deadline_session

            session = self._local.session = deadline_session()
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
        url = f'{self.url}/{route}'
        failure = ''
        for attempt in range(self.retry + 1):
            answer = self._attempt(url, payload, what, kind)
            if isinstance(answer, ApiReply):
                return answer
            failure, told = answer
            if attempt < self.retry:
                time.sleep(
                    min(told, self.max_wait_s) if told is not None else self._backoff(attempt)
                )
        raise self._error(
            f'{url} did not answer {what} after {self.retry + 1} attempts: {failure}; check the '
            'server and resume the run with -r (answered requests are cached)'
        )

    def _attempt(
        self, url: str, payload: bytes, what: str, kind: str
    ) -> ApiReply | tuple[str, Optional[float]]:
        """One POST: the reply, or (why it failed, the wait the server asked for) where trying
        again may help; raises where it may not."""
        started = time.perf_counter()
        sent = self._send(url, payload, what)
        if isinstance(sent, str):
            return sent, None
        response, body = sent
        status = response.status_code
        if 200 <= status < 300:
            return self._reply(body, time.perf_counter() - started, url, what, kind)
        if 300 <= status < 400:
            location = response.headers.get('Location') or '(no Location header)'
            raise self._error(
                f'{url} redirected {what} to {location} (HTTP {status}): redirects are not '
                'followed (after a 301, 302 or 303 the POST would arrive there as a GET, and '
                "another host's answer would be taken for the model's); set url to the address "
                'that answers'
            )
        message = _server_message(body, self.redact)
        if status in (401, 403):
            source = f'the key in ${self.key_env}' if self.key_env else 'no key (key_env unset)'
            raise self._error(
                f'{url} refused {source} for {what}: HTTP {status} {message}; set a valid key '
                'in that variable'
            )
        if status not in RETRIED_STATUS and status < 500:
            raise self._error(f'{url} rejected {what}: HTTP {status} {message}')
        failure = f'HTTP {status} {message}'.rstrip()
        return failure, _retry_after(response.headers.get('Retry-After'))

    def _send(self, url: str, payload: bytes, what: str):
        """(response, its whole body) within ``timeout`` seconds, redirects not followed; or why
        no reply came (a timeout, a refused or dropped connection), in words."""
        import requests

        from .deadline import deadline

        with deadline(self.timeout) as limit:
            try:
                response = self._session().post(
                    url,
                    data=payload,
                    headers=self._headers(),
                    timeout=self.timeout,
                    stream=True,
                    allow_redirects=False,
                )
                with response:
                    return response, self._read(response, url, what)
            except (requests.RequestException, OSError) as exc:
                if limit.passed:
                    return f'no whole reply within timeout={self.timeout:g} s'
                return f'{type(exc).__name__} ({_one_line(str(exc), self.redact, 200)})'

    def _read(self, response, url: str, what: str) -> bytes:
        """The whole body, counted while it is read (as decoded: a compressed body counts as it
        expands); past ``max_reply_bytes`` it is refused and nothing of it is kept."""
        declared = response.headers.get('Content-Length', '')
        if declared.isdigit() and int(declared) > self.max_reply_bytes:
            raise self._too_long(url, what, f'{int(declared)} bytes announced')
        chunks, size = [], 0
        for chunk in response.iter_content(_READ_CHUNK):
            size += len(chunk)
            if size > self.max_reply_bytes:
                raise self._too_long(url, what, f'{size} bytes read when it stopped')
            chunks.append(chunk)
        return b''.join(chunks)

    def _too_long(self, url: str, what: str, seen: str) -> ApiError:
        return self._error(
            f'{url} answered {what} with more than max_reply_bytes={self.max_reply_bytes} bytes '
            f'({seen}); nothing of it was kept or cached: raise max_reply_bytes if answers this '
            'long are meant'
        )

    def _reply(self, body: bytes, latency: float, url: str, what: str, kind: str) -> ApiReply:
        """The answer of a 2xx body (redacted: a server may echo the key in it)."""
        try:
            payload = json.loads(body)
            choice = payload['choices'][0]
            content = choice['message']['content'] if kind == 'message' else choice['text']
        except (ValueError, KeyError, IndexError, TypeError):
            raise self._error(
                f'{url} answered {what} with a body that is not an OpenAI completion: '
                f'{_one_line(body, self.redact, 200)}'
            ) from None
        finish = choice.get('finish_reason')
        finish = finish if isinstance(finish, str) else None
        text = _answer_text(content)
        if text is None:
            shown = _one_line(json.dumps(content), self.redact, 200)
            raise self._error(
                f'{url} answered {what} with no text: {"content" if kind == "message" else "text"}'
                f' is {shown} (finish_reason {finish!r}); nothing was cached: check what the '
                'server returns for this request'
            )
        usage = payload.get('usage') if isinstance(payload.get('usage'), dict) else {}
        return ApiReply(
            self.redact(text),
            _usage_count(usage, 'prompt_tokens'),
            _usage_count(usage, 'completion_tokens'),
            round(latency, 4),
            False,
            self.redact(finish) if finish is not None else None,
        )
