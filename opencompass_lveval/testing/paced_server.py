"""A stand-in for a vLLM replica where real engines are too slow: an OpenAI-compatible
``/v1/completions`` server whose replies take time in proportion to their tokens.

A replica works through ``tokens_per_s`` tokens a second, shared equally among the requests it
holds (processor sharing, as an engine's batch shares its steps), so a replica given W tokens of
work finishes them in W / tokens_per_s seconds however they arrive: the makespan a dispatcher
reaches can be set against that bound. A request costs its prompt tokens plus ``max_tokens``.

Every request it receives and answers is a line of ``--log`` (JSONL, appended and flushed at
once), with the tokens held at that moment: what the tests and the bench count from the server's
side (order of arrival, tokens in flight, requests asked twice). The answer is a pure function
of the request (a digest of prompt and settings), so two runs answer alike byte for byte.

``GET /health`` answers 200; ``GET /metrics`` gives vLLM's ``vllm:cache_config_info`` line where
``--kv-tokens`` is set, so the default cap of tokens in flight can be read as from vLLM.

A stand-in may also misbehave on purpose (``--fault KIND``, on every ``--fault-every``-th reply):
answer with the previous request's reply, name another model, count more completion tokens than
asked, give two choices or none, or send a reply of ``--huge-bytes``; or exit after
``--exit-after`` replies (a replica that dies mid-run). What the dispatcher must catch.

``python -m opencompass_lveval.testing.paced_server --port 8000 --tokens-per-s 2000 --log F``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

TICK_S = 0.005  # how often the shared work is handed out
BLOCK_SIZE = 16  # tokens per KV block reported on /metrics


def paced_answer(body: dict) -> str:
    """The reply text: a digest of what decides an engine's greedy answer."""
    decided = {key: body.get(key) for key in ('model', 'prompt', 'max_tokens', 'stop')}
    digest = hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()
    return f'paced {digest[:16]}'


def body_key(body: dict) -> str:
    """How the log names a request: a digest of its body."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def prompt_tokens(prompt: Any) -> int:
    """Tokens of a prompt: a list of ids as they are, a text by its words (a stand-in count)."""
    if isinstance(prompt, list):
        return len(prompt)
    return len(str(prompt).split())


class Pacer:
    """Work shared among the requests in flight, ``tokens_per_s`` in all."""

    def __init__(self, tokens_per_s: float, log_path: Optional[str]) -> None:
        self.tokens_per_s = tokens_per_s
        self.remaining: dict[int, float] = {}
        self.held: dict[int, int] = {}  # tokens each request in flight costs
        self.done: dict[int, threading.Event] = {}
        self.lock = threading.Lock()
        self.log = open(log_path, 'a', encoding='utf-8') if log_path else None  # noqa: SIM115 (open for the server's life)
        self.next_id = 0
        threading.Thread(target=self._tick, daemon=True).start()

    def record(self, event: str, request: int, **fields) -> None:
        if self.log is None:
            return
        line = {'event': event, 'request': request, 'time': time.time(), **fields}
        with self.lock:
            line['tokens_in_flight'] = sum(self.held.values())
            self.log.write(json.dumps(line) + '\n')
            self.log.flush()

    def admit(self, cost: int) -> tuple[int, threading.Event]:
        with self.lock:
            request, self.next_id = self.next_id, self.next_id + 1
            self.remaining[request], self.held[request] = float(cost), cost
            self.done[request] = threading.Event()
            return request, self.done[request]

    def release(self, request: int) -> None:
        with self.lock:
            for table in (self.remaining, self.held, self.done):
                table.pop(request, None)

    def _tick(self) -> None:
        last = time.monotonic()
        while True:
            time.sleep(TICK_S)
            now = time.monotonic()
            with self.lock:
                active = [r for r, left in self.remaining.items() if left > 0]
                share = self.tokens_per_s * (now - last) / max(1, len(active))
                for request in active:
                    self.remaining[request] -= share
                    if self.remaining[request] <= 0:
                        self.done[request].set()
            last = now


FAULTS = ('previous', 'other-model', 'long', 'two-choices', 'no-choices', 'huge')


class Faults:
    """Which replies misbehave, and how (see the module)."""

    def __init__(self, kind: Optional[str], every: int, huge_bytes: int, exit_after: int) -> None:
        self.kind, self.every, self.huge_bytes, self.exit_after = (
            kind,
            every,
            huge_bytes,
            exit_after,
        )
        self.count, self.previous = 0, None
        self.lock = threading.Lock()

    def apply(self, reply: dict) -> bytes:
        with self.lock:
            self.count += 1
            faulty = self.kind is not None and self.count % self.every == 0
            previous, self.previous = self.previous, reply
        if faulty and self.kind == 'previous' and previous is not None:
            reply = previous
        elif faulty and self.kind == 'other-model':
            reply = {**reply, 'model': 'another-model'}
        elif faulty and self.kind == 'long':
            reply = {**reply, 'usage': {**reply['usage'], 'completion_tokens': 100000}}
        elif faulty and self.kind == 'two-choices':
            reply = {**reply, 'choices': reply['choices'] * 2}
        elif faulty and self.kind == 'no-choices':
            reply = {**reply, 'choices': []}
        elif faulty and self.kind == 'huge':
            reply = {**reply, 'padding': 'x' * self.huge_bytes}
        return json.dumps(reply).encode()

    def exhausted(self) -> bool:
        return bool(self.exit_after) and self.count >= self.exit_after


def handler(pacer: Pacer, kv_tokens: Optional[int], faults: Faults) -> type:
    class Paced(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, payload: bytes, kind: str = 'application/json') -> None:
            self.send_response(status)
            self.send_header('Content-Type', kind)
            self.send_header('Content-Length', str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path == '/health':
                self._send(200, b'')
            elif self.path == '/metrics' and kv_tokens:
                blocks = kv_tokens // BLOCK_SIZE
                line = (
                    f'vllm:cache_config_info{{block_size="{BLOCK_SIZE}",'
                    f'num_gpu_blocks="{blocks}"}} 1.0\n'
                )
                self._send(200, line.encode(), 'text/plain')
            else:
                self._send(404, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
            if self.path != '/v1/completions':
                self._send(404, b'{"error": {"message": "only /v1/completions"}}')
                return
            prompt, answer = prompt_tokens(body.get('prompt')), int(body.get('max_tokens', 16))
            request, done = pacer.admit(prompt + answer)
            key = body_key(body)
            pacer.record('received', request, key=key, prompt_tokens=prompt, max_tokens=answer)
            done.wait()
            text = paced_answer(body)
            reply = {
                'object': 'text_completion',
                'model': body.get('model'),
                'choices': [{'index': 0, 'text': text, 'finish_reason': 'length'}],
                'usage': {'prompt_tokens': prompt, 'completion_tokens': answer},
            }
            pacer.release(request)  # before the reply: a client that has it may send more
            try:
                self._send(200, faults.apply(reply))
                pacer.record('answered', request, key=key)
            except OSError:  # the client gave up (its deadline): no answer went out
                pacer.record('abandoned', request, key=key)
            if faults.exhausted():
                os._exit(3)

    return Paced


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--tokens-per-s', type=float, required=True)
    parser.add_argument('--log', help='JSONL file each request received and answered goes to')
    parser.add_argument('--kv-tokens', type=int, help='KV capacity that /metrics reports')
    parser.add_argument('--fault', choices=FAULTS, help='how its faulty replies misbehave')
    parser.add_argument('--fault-every', type=int, default=1, help='every n-th reply is faulty')
    parser.add_argument('--huge-bytes', type=int, default=32 * 2**20, help="a 'huge' reply's size")
    parser.add_argument('--exit-after', type=int, default=0, help='exit after n replies (code 3)')
    args = parser.parse_args(argv)
    pacer = Pacer(args.tokens_per_s, args.log)
    faults = Faults(args.fault, args.fault_every, args.huge_bytes, args.exit_after)
    server = ThreadingHTTPServer((args.host, args.port), handler(pacer, args.kv_tokens, faults))
    server.daemon_threads = True
    pacer.record('started', -1, pid=os.getpid(), port=args.port)
    server.serve_forever()


if __name__ == '__main__':
    main()
