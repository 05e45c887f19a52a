"""LongContextAPI against hostile servers and careless settings (issue 37): each case starts from
the hostile input, served by a real HTTP server on 127.0.0.1 (``servers.HostileServer``), and
checks what the user gets (a refusal naming the setting, an error naming the request) and that
nothing is cached where it must not be. Good inputs are ``test_api.py``'s."""

from __future__ import annotations

import json
import logging
import time
import tracemalloc

import pytest
from servers import (
    HostileServer,
    completion,
    drip,
    echo_key,
    encoded_forms,
    huge,
    redirect,
    self_signed_certificate,
    throttled,
)
from test_api import marked_prompt

from opencompass_lveval.files.errors import ApiError, ModelConfigError
from opencompass_lveval.models.api import LongContextAPI

# A key with every character that an encoding changes ('/', '+', '=', '%', a space, quotes, a
# backslash) around a marker that every form of it still holds.
KEY = 'sk-proj/Ab+Cd=Ef%20Gh "Ij" \\Kl\'Mn-NEVERSHOWN-0123'
MARKER = 'NEVERSHOWN'


def api(url: str, tmp_path, **overrides) -> LongContextAPI:
    config = dict(
        path='gpt-4-0613',
        max_seq_len=8192,
        tokenizer_path='cl100k_base',
        url=url,
        retry=0,
        cache_dir=str(tmp_path / 'cache'),
    )
    return LongContextAPI(**{**config, **overrides})


def cached_files(tmp_path) -> list:
    return sorted((tmp_path / 'cache').rglob('*.json'))


# Unsafe: a secret in a form the redaction did not know ---------------------------------------


def test_a_key_echoed_in_every_encoding_is_in_no_error_answer_log_or_cache(
    tmp_path, monkeypatch, caplog
):
    """A server sends the key back raw, percent-encoded (either way, either case), JSON-escaped
    and as a repr: in a refusal, in an answer and in a redirect's target. None of it reaches an
    error, the log, a cached reply or a usage record."""
    monkeypatch.setenv('LVEVAL_TEST_KEY', KEY)
    caplog.set_level(logging.DEBUG)
    assert all(MARKER in form for form in encoded_forms(KEY).values())
    seen = []
    for answer in (echo_key(401), echo_key(502)):
        with HostileServer(answer) as server, pytest.raises(ApiError) as error:
            api(server.url, tmp_path, key_env='LVEVAL_TEST_KEY').generate([marked_prompt(5)], 8)
        assert server.requests[0]['auth'] == f'Bearer {KEY}'
        seen.append(str(error.value))
    target = 'http://127.0.0.1:9/v1?key=' + encoded_forms(KEY)['form-encoded']
    with HostileServer(redirect(302, target)) as server, pytest.raises(ApiError) as error:
        api(server.url, tmp_path, key_env='LVEVAL_TEST_KEY').generate([marked_prompt(5)], 8)
    seen.append(str(error.value))
    with HostileServer(echo_key(200)) as server:
        model = api(server.url, tmp_path, key_env='LVEVAL_TEST_KEY')
        [answer] = model.generate([marked_prompt(5)], 8)
    assert answer.count('[redacted]') == len(encoded_forms(KEY))
    assert all('[redacted]' in message for message in seen)
    cached = [path.read_text() for path in cached_files(tmp_path)]
    assert len(cached) == 1
    for written in [*seen, answer, *cached, caplog.text, json.dumps(model.usage)]:
        assert MARKER not in written


@pytest.mark.parametrize(
    'bad, named',
    [
        (KEY + '\n', f'a line break at character {len(KEY) + 1} of {len(KEY) + 1}'),
        (KEY[:5] + '\x07' + KEY[5:], 'a control character (U+0007) at character 6'),
        ('\u201c' + KEY + '\u201d', 'U+201C (LEFT DOUBLE QUOTATION MARK), which is not ASCII'),
        (KEY.replace(' ', '\u00a0'), 'U+00A0 (NO-BREAK SPACE), which is not ASCII'),
        ('  \t', 'nothing but whitespace'),
    ],
)
def test_a_key_no_header_can_carry_is_refused_at_build_naming_the_variable(
    tmp_path, monkeypatch, bad, named
):
    monkeypatch.setenv('LVEVAL_TEST_KEY', bad)
    with HostileServer(completion('x')) as server, pytest.raises(ModelConfigError) as error:
        api(server.url, tmp_path, key_env='LVEVAL_TEST_KEY')
    message = str(error.value)
    assert f'LVEVAL_TEST_KEY holds {named}' in message and MARKER not in message
    assert server.requests == []


# Unbounded: no deadline, no size ---------------------------------------------------------------


@pytest.mark.slow  # each waits out its deadline
@pytest.mark.parametrize('headers_at_once', [False, True], ids=['headers drip', 'body drips'])
def test_a_server_that_drips_is_cut_off_at_the_deadline(tmp_path, headers_at_once):
    """A byte every 0.2 s never trips a per-read timeout of 1 s; the deadline ends each attempt
    at 1 s, connecting and the whole reply included, and nothing is cached."""
    with HostileServer(drip(0.2, headers_at_once)) as server:
        model = api(server.url, tmp_path, timeout=1, retry=1, max_wait_s=0)
        started = time.perf_counter()
        with pytest.raises(ApiError) as error:
            model.generate([marked_prompt(5)], 8)
        took = time.perf_counter() - started
    assert 'after 2 attempts: no whole reply within timeout=1 s' in str(error.value)
    assert len(server.requests) == 2 and 2 <= took < 4
    assert cached_files(tmp_path) == []


@pytest.mark.slow  # waits out its deadline
def test_the_deadline_holds_over_https(tmp_path, monkeypatch):
    """Real APIs are HTTPS: the deadline shuts the socket under TLS alike, and a good answer
    still comes over one kept-alive connection."""
    tls = self_signed_certificate(tmp_path)
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', str(tls[0]))
    with HostileServer(drip(0.2), tls) as server:
        model = api(server.url, tmp_path, timeout=1)
        started = time.perf_counter()
        with pytest.raises(ApiError, match='no whole reply within timeout=1 s'):
            model.generate([marked_prompt(5)], 8)
    assert server.url.startswith('https://') and time.perf_counter() - started < 2
    with HostileServer(completion('answered'), tls) as server:
        model = api(server.url, tmp_path, timeout=5)
        assert model.generate([marked_prompt(5)], 8) == ['answered']
        assert model.generate([marked_prompt(6)], 8) == ['answered']
    assert server.connections == 1


@pytest.mark.parametrize(
    'setting, value',
    [
        ('timeout', None),
        ('timeout', 0),
        ('timeout', -5),
        ('timeout', '600'),
        ('timeout', float('inf')),
        ('timeout', True),
        ('max_wait_s', -1),
        ('max_wait_s', None),
        ('max_reply_bytes', 0),
        ('max_reply_bytes', 1.5e6),
        ('retry', -1),
    ],
)
def test_a_limit_no_request_could_keep_is_refused_at_build(tmp_path, setting, value):
    with HostileServer(completion('x')) as server, pytest.raises(ModelConfigError) as error:
        api(server.url, tmp_path, **{setting: value})
    assert f'gpt-4-0613: {setting} must be ' in str(error.value)
    assert f'not {value!r}' in str(error.value) and server.requests == []


def test_max_wait_s_caps_a_retry_after_and_defaults_to_120(tmp_path):
    def later_then_answer(handler, body):
        if len(server.requests) == 1:
            throttled('3600')(handler, body)
        else:
            completion('answered')(handler, body)

    with HostileServer(later_then_answer) as server:
        assert api(server.url, tmp_path).client.max_wait_s == 120
        model = api(server.url, tmp_path, retry=1, max_wait_s=0.5)
        started = time.perf_counter()
        assert model.generate([marked_prompt(5)], 8) == ['answered']
    assert len(server.requests) == 2 and 0.5 <= time.perf_counter() - started < 3


@pytest.mark.parametrize('declared', [True, False], ids=['Content-Length', 'read to the end'])
def test_a_huge_reply_is_refused_while_it_is_read_and_not_cached(tmp_path, declared):
    """200 MB for a request of 8 tokens: refused as soon as 16 MiB (the default) are counted,
    or at once where the server announces its length; the memory stays near the limit."""
    size = 200 * 2**20
    answer = huge(size, declared)
    with HostileServer(answer) as server:
        model = api(server.url, tmp_path)
        tracemalloc.start()
        try:
            with pytest.raises(ApiError) as error:
                model.generate([marked_prompt(5)], 8)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert 'with more than max_reply_bytes=16777216 bytes' in str(error.value)
    assert 'sample 0' in str(error.value) and cached_files(tmp_path) == []
    assert peak < 3 * 16 * 2**20 and answer.written < size / 2


def test_max_reply_bytes_is_a_setting(tmp_path):
    with HostileServer(completion('y' * 5000)) as server:
        with pytest.raises(ApiError, match='more than max_reply_bytes=1000 bytes'):
            api(server.url, tmp_path, max_reply_bytes=1000).generate([marked_prompt(5)], 8)
        assert api(server.url, tmp_path, max_reply_bytes=6000).generate([marked_prompt(5)], 8) == [
            'y' * 5000
        ]


# Silently wrong: answers that are no text, redirects -----------------------------------------


@pytest.mark.parametrize(
    'content, shown',
    [
        (None, 'content is null'),
        (42, 'content is 42'),
        ([{'type': 'image_url', 'image_url': {'url': 'x'}}], 'content is [{"type": "image_url"'),
        ({'text': 'Paris'}, 'content is {"text": "Paris"}'),
    ],
)
def test_an_answer_that_is_no_text_is_an_error_naming_the_request_and_not_cached(
    tmp_path, content, shown
):
    with HostileServer(completion(content, finish_reason='length')) as server:
        model = api(server.url, tmp_path)
        model.sample_offset = 7
        with pytest.raises(ApiError) as error:
            model.generate([marked_prompt(5)], 8)
    message = str(error.value)
    assert 'answered sample 7 (' in message and f'with no text: {shown}' in message
    assert "(finish_reason 'length')" in message and 'nothing was cached' in message
    assert cached_files(tmp_path) == []


def test_content_parts_are_joined_and_a_completion_text_checked_alike(tmp_path):
    parts = [{'type': 'text', 'text': 'The key is in '}, {'type': 'text', 'text': 'Paris.'}]
    with HostileServer(completion(parts)) as server:
        assert api(server.url, tmp_path).generate([marked_prompt(5)], 8) == ['The key is in Paris.']
    assert len(cached_files(tmp_path)) == 1
    with HostileServer(completion(None)) as server:  # /v1/completions: "text": null
        client = api(server.url, tmp_path / 'text').client
        with pytest.raises(ApiError, match='with no text: text is null'):
            client.complete('completions', {'model': 'm', 'prompt': 'p'}, 'a completion')
    assert server.requests[0]['path'] == '/v1/completions'


@pytest.mark.parametrize('status', [301, 302, 303, 307, 308])
def test_a_redirect_is_an_error_naming_its_target_never_followed(tmp_path, status):
    """requests would follow a 301/302 as a GET to the other host, whose answer became the
    model's; here the other host is never asked and nothing is cached."""
    with HostileServer(completion('the other host answered')) as other:
        server = HostileServer(redirect(status, f'{other.url}/chat/completions'))
        with server, pytest.raises(ApiError) as error:
            api(server.url, tmp_path).generate([marked_prompt(5)], 8)
    message = str(error.value)
    assert 'redirected sample 0' in message and f'to {other.url}/chat/completions' in message
    assert f'(HTTP {status}): redirects are not followed' in message
    assert other.requests == [] and cached_files(tmp_path) == []


# Crashes: URLs that cannot be right, cache entries of the wrong shape ------------------------


@pytest.mark.parametrize(
    'url, problem',
    [
        ('http:///v1', 'names no host'),
        ('http://127.0.0.1:99999/v1', 'has a port that is not a number from 1 to 65535'),
        ('http://127.0.0.1:80a/v1', 'has a port that is not a number from 1 to 65535'),
        ('http://127.0.0.1:0/v1', 'has port 0'),
        ('127.0.0.1:8000/v1', 'does not start with http:// or https://'),
        ('ftp://127.0.0.1/v1', 'does not start with http:// or https://'),
        ('http://127.0.0.1 :8000/v1', 'holds a space or a control character'),
        ('http://127.0.0.1:8000/v1?x=1', 'has a query or fragment'),
        ('http://127.0.0.1:8000/v1/chat/completions', 'ends with the route'),
        ('http://[::1/v1', 'cannot be parsed'),
        ('http://user:p4ss-NEVERSHOWN@:8000/v1', 'names no host'),
    ],
)
def test_a_url_that_cannot_be_right_is_refused_at_build(tmp_path, url, problem):
    """These were retried as outages for 20-30 s; now refused before any request, at once."""
    started = time.perf_counter()
    with pytest.raises(ModelConfigError) as error:
        api(url, tmp_path, retry=5)
    message = str(error.value)
    assert message.startswith('gpt-4-0613: url must be an http(s) base URL such as')
    assert problem in message and MARKER not in message
    assert time.perf_counter() - started < 1


@pytest.mark.parametrize(
    'change, problem',
    [
        ({'prompt_tokens': 'abc'}, '"prompt_tokens" is "abc", not a whole number'),
        ({'completion_tokens': 2.5}, '"completion_tokens" is 2.5, not a whole number'),
        ({'latency_s': float('nan')}, '"latency_s" is NaN, not a number of seconds'),
        ({'text': None}, '"text" is null, not a string'),
        ({'finish_reason': 7}, '"finish_reason" is 7, not a string or null'),
        ('[1, 2]', 'a JSON list, not an object'),
        ('{"text": "cut', 'cannot be read as JSON'),
        ('x' * (16 * 2**20 + 5000), 'larger than 16781312 bytes'),
    ],
)
def test_a_cache_entry_of_the_wrong_shape_is_asked_again_named_and_rewritten(
    tmp_path, caplog, change, problem
):
    """A cache entry the client never writes (damaged, or made by something else) crashed the
    run (a TypeError deep in a sum) or became the answer. It counts as a miss: the request is
    asked again, the file and what was wrong are logged, and the entry is rewritten whole."""
    with HostileServer(completion('answered')) as server:
        first = api(server.url, tmp_path)
        first.generate([marked_prompt(5)], 8)
        [path] = cached_files(tmp_path)
        entry = json.loads(path.read_text())
        path.write_text(change if isinstance(change, str) else json.dumps({**entry, **change}))
        again = api(server.url, tmp_path)
        with caplog.at_level(logging.WARNING):
            assert again.generate([marked_prompt(5)], 8) == ['answered']
    assert len(server.requests) == 2 and again.usage[0]['cached'] is False
    assert f'cache entry {path}: {problem}' in caplog.text and 'asked again' in caplog.text
    rewritten = json.loads(path.read_text())
    assert again.client.cache.discarded == 1
    assert rewritten == {**entry, 'latency_s': rewritten['latency_s']}


def test_the_judge_cache_is_checked_alike(tmp_path, caplog):
    from opencompass_lveval.evaluators.judge import Judge

    with HostileServer(completion('Rating: [7]')) as server:
        config = dict(
            type='opencompass_lveval.models.api.LongContextAPI',
            path='gpt-4-0613',
            max_seq_len=8192,
            tokenizer_path='cl100k_base',
            url=server.url,
            retry=0,
        )
        assert Judge(config, cache_dir=tmp_path).rate('How good?').rating == 7
        [path] = sorted((tmp_path / 'verdicts').rglob('*.json'))
        path.write_text(json.dumps({**json.loads(path.read_text()), 'prompt_tokens': 'abc'}))
        with caplog.at_level(logging.WARNING):
            verdict = Judge(config, cache_dir=tmp_path).rate('How good?')
    # The verdict is made again from the API model's reply cache: no second request.
    assert verdict.rating == 7 and verdict.prompt_tokens == 11 and len(server.requests) == 1
    assert f'cache entry {path}: "prompt_tokens" is "abc"' in caplog.text
    assert json.loads(path.read_text())['prompt_tokens'] == 11


# The served path -------------------------------------------------------------------------------


def test_requests_keep_one_connection_alive(tmp_path):
    """Bounding each request costs no connection: answered requests reuse one."""
    with HostileServer(completion('answered')) as server:
        model = api(server.url, tmp_path, cache_dir=None)
        for words in range(1, 6):
            assert model.generate([marked_prompt(words)], 8) == ['answered']
    assert len(server.requests) == 5 and server.connections == 1
