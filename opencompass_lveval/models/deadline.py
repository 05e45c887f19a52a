"""A total deadline for one HTTP request made with ``requests``.

``requests``' ``timeout`` bounds each read, not the request: a server that sends one byte a second
(headers or body) holds a request for ever. Here every socket a request uses is watched by the
deadline of the thread that makes it, and when the deadline passes the socket is shut down, which
ends at once whatever read or write waits on it; the request then fails as a dropped connection,
and ``Deadline.passed`` tells the caller why. One timer thread per request, nothing per byte.
"""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from requests import Session
from requests.adapters import HTTPAdapter

_CURRENT = threading.local()  # the deadline of the request this thread is making, if any


class Deadline:
    """Shuts down the sockets it watches once ``seconds`` have passed (``passed`` is then True)."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.passed = seconds, False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            if self.passed:
                _shut(sock)
            else:
                self._sockets.append(sock)

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            for sock in self._sockets:
                _shut(sock)


@contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """The requests this thread makes inside the block end at most ``seconds`` after it began."""
    limit = Deadline(seconds)
    _CURRENT.deadline = limit
    limit._timer.start()
    try:
        yield limit
    finally:
        limit._timer.cancel()
        _CURRENT.deadline = None


def _shut(sock: socket.socket) -> None:
    """Ends every read and write on ``sock`` (its TLS layer, if any, left alone: the raw socket's
    own shutdown, callable from any thread)."""
    if isinstance(sock, socket.socket):
        with suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _watch(sock) -> None:
    limit = getattr(_CURRENT, 'deadline', None)
    if limit is not None and sock is not None:
        limit.watch(sock)


class _Watched:
    """A urllib3 connection whose socket the calling thread's deadline watches: a new one once
    connected, a kept-alive one when a request goes out on it."""

    def connect(self) -> None:
        super().connect()
        _watch(self.sock)

    def request(self, *args, **kwargs):
        _watch(self.sock)
        return super().request(*args, **kwargs)


@functools.cache
def _watched(connection_class: type) -> type:
    return type(f'Watched{connection_class.__name__}', (_Watched, connection_class), {})


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter whose connections (direct or through a proxy) are watched."""

    def get_connection_with_tls_context(self, *args, **kwargs):
        pool = super().get_connection_with_tls_context(*args, **kwargs)
        if not issubclass(pool.ConnectionCls, _Watched):
            pool.ConnectionCls = _watched(pool.ConnectionCls)
        return pool


def deadline_session() -> Session:
    """A ``requests.Session`` whose requests a ``deadline`` block bounds."""
    session = Session()
    adapter = DeadlineAdapter()
    session.mount('http://', adapter)
    session.mount('https://', adapter)
    return session
