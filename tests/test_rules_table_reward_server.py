"""Rule table for the reward service's bounded uvicorn (rlcheck.reward.server), in-process with uvicorn's own protocol
steps, the event loop's timer, the transport and the shutdown's sleep replaced by stand-ins that record each call:
when the header timer is armed and disarmed (a new connection, a request's first bytes, complete headers, a closed
connection), what its firing closes and the warning it logs, the shutdown's order (the service's own drain before
uvicorn's, no request cut half-way, bounded, a failing drain logged and the shutdown still run) and the uvicorn
configuration the command line's options become. tests/test_reward_*.py run the real service over loopback."""

from __future__ import annotations

import asyncio
import logging
import types

import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from rlcheck.reward import server


class Timer:
    def __init__(self, delay: float, callback) -> None:
        self.delay, self.callback, self.cancelled = delay, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class Loop:
    def __init__(self) -> None:
        self.timers: list[Timer] = []

    def call_later(self, delay, callback):
        self.timers.append(Timer(delay, callback))
        return self.timers[-1]


class Transport:
    def __init__(self, closing: bool = False) -> None:
        self.closing, self.closed = closing, 0

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def proto(monkeypatch):
    """A BoundedH11Protocol of 2.5 s, uvicorn's own steps recorded (h11 parsing is uvicorn's, tested upstream)."""
    steps: list[tuple] = []
    monkeypatch.setattr(H11Protocol, "connection_made", lambda self, t: steps.append(("made", t)))
    monkeypatch.setattr(H11Protocol, "data_received", lambda self, d: steps.append(("data", d, self.cycle)))
    monkeypatch.setattr(H11Protocol, "connection_lost", lambda self, e: steps.append(("lost", e)))
    p = object.__new__(server.bounded_protocol(2.5))
    p.loop, p.cycle, p.transport, p.client = Loop(), None, Transport(), ("127.0.0.1", 40312)
    p.steps = steps
    return p


def _cycle(complete: bool) -> types.SimpleNamespace:
    return types.SimpleNamespace(response_complete=complete)


def test_bounded_protocol_sets_the_timeout_per_server():
    a, b = server.bounded_protocol(1.5), server.bounded_protocol(7.0)
    assert (a.header_timeout_s, b.header_timeout_s, server.BoundedH11Protocol.header_timeout_s) == (1.5, 7.0, 5.0)
    assert issubclass(a, server.BoundedH11Protocol) and a.__name__ == "BoundedH11Protocol"
    assert server.BoundedH11Protocol._header_timer is None


def test_a_new_connection_arms_the_timer(proto):
    transport = Transport()
    proto.connection_made(transport)
    assert proto.steps == [("made", transport)]
    (timer,) = proto.loop.timers
    assert (timer.delay, timer.callback, proto._header_timer) == (2.5, proto._on_header_timeout, timer)


@pytest.mark.parametrize(("cycle", "awaiting"), [(None, True), (_cycle(True), True), (_cycle(False), False)])
def test_awaiting_headers_before_a_request_and_after_each_response(proto, cycle, awaiting):
    proto.cycle = cycle
    assert proto._awaiting_headers() is awaiting


def test_complete_headers_disarm_the_timer(proto, monkeypatch):
    proto.connection_made(Transport())
    timer = proto.loop.timers[0]

    def parse(self, data):
        self.cycle = _cycle(False)  # uvicorn read the headers: a request cycle runs
    monkeypatch.setattr(H11Protocol, "data_received", parse)
    proto.data_received(b"GET / HTTP/1.1\r\n\r\n")
    assert timer.cancelled and proto._header_timer is None and len(proto.loop.timers) == 1


def test_partial_headers_keep_the_timer(proto):
    proto.connection_made(Transport())
    timer = proto.loop.timers[0]
    proto.data_received(b"GET / HT")
    assert not timer.cancelled and proto._header_timer is timer and len(proto.loop.timers) == 1
    assert proto.steps[-1] == ("data", b"GET / HT", None)


def test_a_next_requests_first_bytes_arm_a_new_timer(proto):
    proto.cycle = _cycle(True)  # the last response is complete: keep-alive, waiting for the next request
    proto.data_received(b"POST /reward")
    (timer,) = proto.loop.timers
    assert proto._header_timer is timer and timer.delay == 2.5


def test_bytes_of_a_running_request_arm_nothing(proto):
    proto.cycle = _cycle(False)
    proto.data_received(b'{"response": "42"}')
    assert proto.loop.timers == [] and proto._header_timer is None


def test_a_closed_connection_disarms_the_timer(proto):
    proto.connection_made(Transport())
    timer = proto.loop.timers[0]
    error = ConnectionResetError()
    proto.connection_lost(error)
    assert timer.cancelled and proto._header_timer is None and proto.steps[-1] == ("lost", error)


def test_disarm_without_a_timer_does_nothing(proto):
    proto._disarm_header_timer()
    assert proto._header_timer is None


def test_the_timer_closes_a_connection_still_waiting_for_headers_and_says_so(proto, caplog):
    proto.connection_made(Transport())
    with caplog.at_level(logging.WARNING, logger="rlcheck.reward"):
        proto._on_header_timeout()
    assert proto.transport.closed == 1 and proto._header_timer is None
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("rlcheck.reward", logging.WARNING, "rlcheck-reward: closed the connection of 127.0.0.1:40312: no complete "
                                            "request headers within 2.5 s (--read-timeout-s)")]


def test_a_client_without_an_address_is_a_client(proto, caplog):
    proto.client = None
    with caplog.at_level(logging.WARNING, logger="rlcheck.reward"):
        proto._on_header_timeout()
    assert caplog.records[0].getMessage().startswith("rlcheck-reward: closed the connection of a client: ")


@pytest.mark.parametrize(("cycle", "closing"), [(_cycle(False), False), (None, True), (_cycle(True), True)])
def test_the_timer_leaves_a_running_request_or_a_closing_connection(proto, caplog, cycle, closing):
    proto.cycle, proto.transport = cycle, Transport(closing=closing)
    proto._header_timer = Timer(2.5, None)
    with caplog.at_level(logging.WARNING, logger="rlcheck.reward"):
        proto._on_header_timeout()
    assert proto.transport.closed == 0 and caplog.records == [] and proto._header_timer is None


# --- the shutdown ----------------------------------------------------------------------------------------------------


@pytest.fixture
def shutdown(monkeypatch):
    """uvicorn's own shutdown and the drain's sleep recorded; returns (order, make a RewardServer)."""
    order: list[object] = []

    async def uvicorn_shutdown(self, sockets=None):
        order.append(("uvicorn", sockets))
    monkeypatch.setattr(uvicorn.Server, "shutdown", uvicorn_shutdown)

    async def sleep(seconds):
        order.append(("sleep", seconds))
        for c in state.connections:
            if c.cycle is not None and c.finish_after is not None:
                c.finish_after -= 1
                if c.finish_after == 0:
                    c.cycle.response_complete = True
    monkeypatch.setattr(server, "asyncio", types.SimpleNamespace(sleep=sleep))
    state = types.SimpleNamespace(connections=[])

    def make(before=None, drained=None) -> server.RewardServer:
        s = server.RewardServer(uvicorn.Config(app=None), before or (lambda: order.append("before")), drained)
        s.server_state = state
        return s
    return order, make, state


def _conn(finish_after: int | None, cycle: bool = True) -> types.SimpleNamespace:
    return types.SimpleNamespace(cycle=_cycle(False) if cycle else None, finish_after=finish_after)


def test_the_service_drains_before_uvicorns_own_shutdown(shutdown):
    order, make, _ = shutdown

    async def drained():
        order.append("drained")
    asyncio.run(make(drained=drained).shutdown(sockets=["s"]))
    assert order == ["before", "drained", ("uvicorn", ["s"])]


def test_the_server_keeps_its_configuration(shutdown):
    _, make, _ = shutdown
    s = make()
    assert isinstance(s.config, uvicorn.Config) and s.config.app is None


def test_without_a_drain_only_before_shutdown_runs_first(shutdown):
    order, make, _ = shutdown
    asyncio.run(make().shutdown())
    assert order == ["before", ("uvicorn", None)]


def test_a_request_half_way_is_waited_for(shutdown):
    order, make, state = shutdown
    state.connections = [_conn(3), _conn(None, cycle=False)]
    asyncio.run(make().shutdown())
    assert order == ["before", ("sleep", 0.05), ("sleep", 0.05), ("sleep", 0.05), ("uvicorn", None)]


def test_the_wait_for_half_way_requests_is_bounded(shutdown):
    order, make, state = shutdown
    state.connections = [_conn(None)]
    asyncio.run(make().shutdown())
    assert order.count(("sleep", 0.05)) == 600 and order[-1] == ("uvicorn", None)


def test_a_failing_drain_is_logged_and_the_shutdown_still_runs(shutdown, caplog):
    order, make, _ = shutdown

    def broken():
        raise RuntimeError("pool gone")
    with caplog.at_level(logging.ERROR, logger="rlcheck.reward"):
        asyncio.run(make(before=broken).shutdown())
    assert order == [("uvicorn", None)]
    assert [(r.name, r.getMessage(), r.exc_info[0]) for r in caplog.records] == [
        ("rlcheck.reward", "rlcheck-reward: preparing the shutdown failed", RuntimeError)]


@pytest.mark.parametrize(("connection", "mid"), [
    (types.SimpleNamespace(cycle=_cycle(False)), True), (types.SimpleNamespace(cycle=_cycle(True)), False),
    (types.SimpleNamespace(cycle=None), False), (object(), False)])
def test_mid_request(connection, mid):
    assert server._mid_request(connection) is mid


# --- the configuration -----------------------------------------------------------------------------------------------


def test_the_options_become_uvicorns_configuration():
    app = object()
    config = server.server_config(app, host="::1", port=8123, log_level="warning", access_log=False,
                                  keep_alive_s=7, graceful_shutdown_s=11, read_timeout_s=2.5, max_connections=64)
    assert (config.app, config.host, config.port, config.log_config, config.log_level, config.access_log,
            config.lifespan, config.timeout_keep_alive, config.timeout_graceful_shutdown, config.limit_concurrency) == (
        app, "::1", 8123, None, "warning", False, "on", 7, 11, 64)
    assert issubclass(config.http, server.BoundedH11Protocol) and config.http.header_timeout_s == 2.5
