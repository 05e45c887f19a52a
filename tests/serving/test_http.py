"""The dispatcher's HTTP/1.1 client against a real server on 127.0.0.1: kept-alive connections
reused, a reply past the cap refused while it is read, an idle connection the server closed
replaced without a failed request, a deadline that ends the exchange."""

from __future__ import annotations

import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from opencompass_lveval.serving.http import ConnectionPool, ReplyTooLarge, health


class Scripted:
    """A server whose replies the test sets: ``body``, how it is sent, whether it keeps the
    connection; it counts the connections it accepted."""

    def __init__(self) -> None:
        self.body, self.chunked, self.keep, self.delay = b'{"ok": 1}', False, True, 0.0
        self.connections = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def setup(self):
                super().setup()
                owner.connections += 1

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._reply()

            def do_POST(self):
                self.rfile.read(int(self.headers['Content-Length']))
                if owner.delay:
                    threading.Event().wait(owner.delay)
                self._reply()

            def _reply(self):
                self.send_response(200)
                if not owner.keep:
                    self.send_header('Connection', 'close')
                if owner.chunked:
                    self.send_header('Transfer-Encoding', 'chunked')
                    self.end_headers()
                    for start in range(0, len(owner.body), 1000):
                        part = owner.body[start : start + 1000]
                        self.wfile.write(b'%x\r\n%s\r\n' % (len(part), part))
                    self.wfile.write(b'0\r\n\r\n')
                else:
                    self.send_header('Content-Length', str(len(owner.body)))
                    self.end_headers()
                    self.wfile.write(owner.body)
                if not owner.keep:
                    self.close_connection = True

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}/v1'

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server():
    scripted = Scripted()
    yield scripted
    scripted.close()


def run(coroutine):
    return asyncio.run(coroutine)


def test_connections_are_kept_and_reused(server):
    async def three():
        pool = ConnectionPool(server.url, 2**20)
        answers = [await pool.post('/completions', b'{}') for _ in range(3)]
        pool.close()
        return answers

    assert [(r.status, r.body) for r in run(three())] == [(200, b'{"ok": 1}')] * 3
    assert server.connections == 1
    server.keep = False
    run(three())
    assert server.connections == 4  # the server closes each: one connection a request


def test_a_reply_past_the_cap_is_refused_as_it_is_read(server):
    server.body = b'x' * 50_000
    for chunked in (False, True):
        server.chunked = chunked
        with pytest.raises(ReplyTooLarge, match='more than max_reply_bytes=10000 bytes'):
            run(ConnectionPool(server.url, 10_000).post('/completions', b'{}'))
    server.body = b'y' * 5000
    assert run(ConnectionPool(server.url, 10_000).post('/completions', b'{}')).body == server.body


def test_an_idle_connection_the_server_closed_costs_no_request(server):
    async def across_a_close():
        pool = ConnectionPool(server.url, 2**20)
        first = await pool.post('/completions', b'{}')
        for _, writer in pool.idle:  # the server side goes away, as a keep-alive timeout does
            writer.transport.abort()
        second = await pool.post('/completions', b'{}')
        return first, second

    first, second = run(across_a_close())
    assert first.status == second.status == 200 and server.connections == 2


def test_a_deadline_ends_the_exchange_and_its_connection(server):
    server.delay = 2.0

    async def late():
        pool = ConnectionPool(server.url, 2**20)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(pool.post('/completions', b'{}'), 0.2)
        kept = len(pool.idle)  # the cancelled exchange's connection is closed, not kept
        return kept, await health(pool, 5)

    assert run(late()) == (0, True)
