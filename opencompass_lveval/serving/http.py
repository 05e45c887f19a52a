"""HTTP/1.1 to a replica's server over kept-alive connections, for the dispatcher's event loop.

One ``ConnectionPool`` per replica: a request takes an idle connection or opens one, and gives it
back when the server keeps it open; the dispatcher holds at most ``senders`` requests per
replica, so at most that many connections. No thread per request: a deadline is the caller's
``asyncio.wait_for``, which closes the connection it cancels. A body is counted while it is read
and refused past ``max_reply_bytes`` (announced or not), nothing of it kept. A server that closed
an idle connection (vLLM's keep-alive is a few seconds) costs one silent reconnect, never a
failed request.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from dataclasses import dataclass
from typing import Optional

MAX_HEADER_BYTES = 64 * 1024
_CHUNK = 256 * 1024


class ReplyTooLarge(ConnectionError):
    """A reply longer than the cap: not read, not kept."""


class ProtocolError(ConnectionError):
    """What came back is not HTTP/1.x."""


@dataclass
class Response:
    status: int
    body: bytes


class ConnectionPool:
    """Connections to the server of one base URL (``http://host:port/v1``)."""

    def __init__(self, url: str, max_reply_bytes: int) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ('http', 'https') or not parts.hostname:
            raise ValueError(f'a replica URL must be http(s)://host:port/..., not {url!r}')
        self.host, self.tls = parts.hostname, parts.scheme == 'https'
        self.port = parts.port or (443 if self.tls else 80)
        self.base = parts.path.rstrip('/')
        self.max_reply_bytes = max_reply_bytes
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.closed = False

    async def post(self, path: str, body: bytes) -> Response:
        head = (
            f'POST {self.base}{path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n'
            f'Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n'
        )
        return await self._exchange(head.encode('ascii') + body)

    async def get(self, path: str) -> Response:
        """``path`` from the server's root (``/health``), not under the base."""
        head = f'GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n\r\n'
        return await self._exchange(head.encode('ascii'))

    async def _exchange(self, request: bytes) -> Response:
        connection = self.idle.pop() if self.idle else None
        if connection is not None:
            try:
                return await self._over(connection, request, reused=True)
            except _Stale:
                pass  # the server closed it while idle: once more on a new one
        connection = await asyncio.open_connection(
            self.host, self.port, ssl=self.tls or None, limit=MAX_HEADER_BYTES
        )
        try:
            return await self._over(connection, request, reused=False)
        except _Stale as exc:
            raise ConnectionError('the server closed the connection without a reply') from exc

    async def _over(self, connection, request: bytes, reused: bool) -> Response:
        reader, writer = connection
        kept = False
        try:
            try:
                writer.write(request)
                await writer.drain()
                status_line = await reader.readline()
            except (ConnectionError, OSError) as exc:
                if reused:
                    raise _Stale from exc
                raise
            if not status_line:
                raise _Stale
            status, headers = await _head(reader, status_line)
            body = await self._body(reader, headers)
            kept = headers.get('connection', '').lower() != 'close' and not self.closed
            if kept:
                self.idle.append(connection)
            return Response(status, body)
        finally:
            if not kept:
                writer.close()

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if headers.get('transfer-encoding', '').lower() == 'chunked':
            chunks, size = [], 0
            while True:
                line = await reader.readline()
                length = int(line.split(b';')[0].strip() or b'0', 16)
                if not length:
                    await reader.readline()  # the blank line after the last chunk
                    return b''.join(chunks)
                size += length
                self._check(size, 'read')
                chunks.append(await reader.readexactly(length))
                await reader.readexactly(2)
        declared = headers.get('content-length')
        if declared is not None:
            if not declared.isdigit():
                raise ProtocolError(f'a Content-Length of {declared[:40]!r}')
            self._check(int(declared), 'announced')
            return await reader.readexactly(int(declared))
        chunks, size = [], 0  # till the server closes
        while True:
            chunk = await reader.read(_CHUNK)
            if not chunk:
                headers['connection'] = 'close'
                return b''.join(chunks)
            size += len(chunk)
            self._check(size, 'read')
            chunks.append(chunk)

    def _check(self, size: int, how: str) -> None:
        if size > self.max_reply_bytes:
            raise ReplyTooLarge(
                f'a reply of more than max_reply_bytes={self.max_reply_bytes} bytes ({size} '
                f'{how}); nothing of it was kept'
            )

    def close(self) -> None:
        self.closed = True
        for _, writer in self.idle:
            writer.close()
        self.idle.clear()


class _Stale(Exception):
    """A kept-alive connection the server had closed."""


async def _head(reader: asyncio.StreamReader, status_line: bytes) -> tuple[int, dict[str, str]]:
    parts = status_line.decode('latin-1').split(None, 2)
    if len(parts) < 2 or not parts[0].startswith('HTTP/1.') or not parts[1].isdigit():
        raise ProtocolError(f'not an HTTP reply: {status_line[:80]!r}')
    headers: dict[str, str] = {}
    size = len(status_line)
    while True:
        line = await reader.readline()
        size += len(line)
        if size > MAX_HEADER_BYTES:
            raise ProtocolError(f'headers longer than {MAX_HEADER_BYTES} bytes')
        if line in (b'\r\n', b'\n', b''):
            break
        name, _, value = line.decode('latin-1').partition(':')
        headers[name.strip().lower()] = value.strip()
    if parts[0] == 'HTTP/1.0' and headers.get('connection', '').lower() != 'keep-alive':
        headers['connection'] = 'close'
    return int(parts[1]), headers


async def health(pool: ConnectionPool, timeout_s: float) -> bool:
    """Whether ``GET /health`` answers 200 within ``timeout_s``."""
    try:
        return (await asyncio.wait_for(pool.get('/health'), timeout_s)).status == 200
    except (asyncio.TimeoutError, OSError, ValueError, ProtocolError):
        return False


def shown(body: Optional[bytes], limit: int = 300) -> str:
    """A body in a message: its start, as text."""
    return (body or b'')[:limit].decode('utf-8', 'replace')
