"""Replicas in the dispatcher's own process, for benches of thousands of requests and tests that
need no server: each is both a ``Replica`` and its transport (``dispatch.Transport``).

A ``PacedStandIn`` works through ``tokens_per_s`` tokens a second shared equally among the
requests it holds, as ``paced_server`` does (processor sharing, as an engine's batch shares its
steps), so a stand-in given W tokens of work finishes them in W / tokens_per_s seconds however
they arrive. It keeps one timer for its next completion, on the dispatcher's event loop. Its
reply is an OpenAI completion of its request (the model asked for, the prompt tokens sent,
``max_tokens`` completion tokens), or, with ``reply``, whatever that function makes of one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, Optional


class PacedStandIn:
    """A replica and its transport in one (see the module)."""

    def __init__(
        self,
        name: str,
        tokens_per_s: float,
        reply: Optional[Callable[[dict], Any]] = None,
    ) -> None:
        self.name, self.node, self.url, self.where = name, 'stand-in', 'http://stand-in/v1', {}
        self.speed, self.reply = tokens_per_s, reply
        self.left: dict[int, float] = {}
        self.waiting: dict[int, tuple[asyncio.Future, dict]] = {}
        self.last, self.timer, self.next_id = 0.0, None, 0
        self.received: list[str] = []  # request keys, in the order they came

    # As a replica
    def alive(self) -> bool:
        return True

    def stop(self) -> int:
        return 0

    def log_tail(self, chars: int = 3000) -> str:
        return ''

    # As its transport
    async def complete(self, request, payload: bytes):
        from ..serving.http import Response

        self.received.append(request.key)
        answer = {
            'model': request.model,
            'choices': [{'text': f'stand-in {request.key[:12]}', 'finish_reason': 'length'}],
            'usage': {
                'prompt_tokens': request.prompt_tokens,
                'completion_tokens': request.max_tokens,
            },
        }
        loop = asyncio.get_running_loop()
        self._advance(loop.time())
        number, self.next_id = self.next_id, self.next_id + 1
        future = loop.create_future()
        self.left[number], self.waiting[number] = float(request.tokens), (future, answer)
        self._schedule(loop)
        try:
            answer = await future
        finally:
            if number in self.left:  # cancelled at its deadline
                self._advance(loop.time())
                self.left.pop(number, None)
                self.waiting.pop(number, None)
                self._schedule(loop)
        made = self.reply(answer) if self.reply else answer
        return made if isinstance(made, Response) else Response(200, json.dumps(made).encode())

    async def healthy(self, timeout_s: float) -> bool:
        return True

    def close(self) -> None:
        pass

    # The pacing
    def _advance(self, now: float) -> None:
        if self.left:
            share = self.speed * (now - self.last) / len(self.left)
            for number in self.left:
                self.left[number] -= share
        self.last = now

    def _schedule(self, loop) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.left:
            due = self.last + min(self.left.values()) * len(self.left) / self.speed
            self.timer = loop.call_at(due, self._tick, loop)

    def _tick(self, loop) -> None:
        self.timer = None
        self._advance(loop.time())
        for number in [n for n, left in self.left.items() if left <= 1e-6]:
            del self.left[number]
            future, answer = self.waiting.pop(number)
            if not future.done():
                future.set_result(answer)
        self._schedule(loop)


def stand_in_transport(replica: Any, settings: Any = None) -> Any:
    """The dispatcher's transport to a stand-in: the stand-in itself."""
    return replica
