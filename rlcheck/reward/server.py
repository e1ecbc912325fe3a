"""uvicorn, bounded: a header read timeout per connection, and a shutdown that answers every request.

uvicorn (h11) arms no timer until a connection's first response, so a client that dribbles its request
headers holds a connection forever; here a connection whose headers have not all arrived within
read_timeout_s is closed. On SIGTERM uvicorn waits timeout_graceful_shutdown for running requests and
then cancels them with HTTP 500, and it closes its listening socket first, which resets connections
not yet accepted. Here, on SIGTERM, the service first answers every request in flight within its
shutdown grace (its reward, or 503 + Retry-After, with Connection: close) while the server keeps
accepting and answering (503) until nothing is in flight and nothing has arrived for a moment; only
then does uvicorn's own shutdown run, with nothing left to cancel.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("rlcheck.reward")


class BoundedH11Protocol(H11Protocol):
    """H11Protocol that closes a connection whose request headers take longer than header_timeout_s."""

    header_timeout_s = 5.0  # set per server by bounded_protocol()
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self._awaiting_headers():
            self._arm_header_timer()
        super().data_received(data)
        if not self._awaiting_headers():  # the headers are complete: the body has its own timeout (payload.py)
            self._disarm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _awaiting_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm_header_timer(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._on_header_timeout)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _on_header_timeout(self) -> None:
        self._header_timer = None
        if self._awaiting_headers() and not self.transport.is_closing():
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
            log.warning("rlcheck-reward: closed the connection of %s: no complete request headers within %g s "
                        "(--read-timeout-s)", client, self.header_timeout_s)
            self.transport.close()


def bounded_protocol(header_timeout_s: float) -> type[BoundedH11Protocol]:
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {"header_timeout_s": header_timeout_s})


class RewardServer(uvicorn.Server):
    """uvicorn.Server that calls before_shutdown() (on the loop) before it waits for requests to end."""

    def __init__(self, config: uvicorn.Config, before_shutdown: Callable[[], None],
                 drained: Callable[[], Awaitable[None]] | None = None) -> None:
        super().__init__(config)
        self._before_shutdown, self._drained = before_shutdown, drained

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            self._before_shutdown()
            if self._drained is not None:
                await self._drained()
            for _ in range(600):  # and no connection is half-way through a request (bounded: 30 s)
                if not any(_mid_request(c) for c in self.server_state.connections):
                    break
                await asyncio.sleep(0.05)
        except Exception:  # a failure here must not skip the shutdown itself
            log.exception("rlcheck-reward: preparing the shutdown failed")
        await super().shutdown(sockets)


def _mid_request(connection: object) -> bool:
    cycle = getattr(connection, "cycle", None)
    return cycle is not None and not cycle.response_complete


def server_config(app: Any, *, host: str, port: int, log_level: str, access_log: bool, keep_alive_s: int,
                  graceful_shutdown_s: int, read_timeout_s: float, max_connections: int) -> uvicorn.Config:
    return uvicorn.Config(app, host=host, port=port, log_config=None, log_level=log_level, access_log=access_log,
                          lifespan="on", timeout_keep_alive=keep_alive_s, http=bounded_protocol(read_timeout_s),
                          timeout_graceful_shutdown=graceful_shutdown_s, limit_concurrency=max_connections)
