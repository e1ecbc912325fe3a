"""The reward service's replies as tables (issue 33): what each scoring outcome is answered with (the reward, the
fallback, 503 + Retry-After), its headers, what is counted, what /health says, and when the service may stop.

SLIME reads the body as the reward and retries a 503: a graded answer replied as the fallback, or a busy host
replied as a reward, teaches the policy the wrong thing without a word, so each outcome is a row here with its
status, body, headers and counters. The scorer pools are stand-ins answering a chosen outcome (the processes are
judged in test_reward_pool.py); the requests are real Starlette requests.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import Response

import rlcheck.reward.app as app_module
from rlcheck.reward.app import RewardService, create_app
from rlcheck.reward.config import ServiceConfig
from rlcheck.reward.metrics import CONTENT_TYPE, parse_text
from rlcheck.reward.pool import Outcome, PoolState
from rlcheck.reward.scorers import HEALTH_PAIRS


class _Pool:
    """A scorer pool answering every scoring with one outcome (None: never), counting what it was given."""

    def __init__(self, outcome: Outcome | None = None, state: PoolState | None = None,
                 by_label: Mapping[str, Outcome] | None = None) -> None:
        self.outcome, self.by_label, self.scored = outcome, by_label or {}, []
        self.closed, self.closing = False, False
        self._state = state or PoolState(idle=2, busy=0, slow=0, starting=0, queued=0, retired={}, spawn_failures=0,
                                         last_spawn_error="")

    async def score(self, response: str, labels: tuple[str, ...]) -> Outcome:
        self.scored.append((response, labels))
        if labels and labels[0] in self.by_label:
            return self.by_label[labels[0]]
        if self.outcome is None:
            await asyncio.Event().wait()
        assert self.outcome is not None
        return self.outcome

    def state(self) -> PoolState:
        return self._state

    def begin_close(self) -> None:
        self.closing = True

    async def start(self) -> None:
        self.started = True

    async def close(self, drain_s: float) -> None:
        self.closed_after_s = drain_s


FAST = {"scorer_timeout_s": 0.01, "scorer_wall_timeout_s": 0.05, "demote_after_cpu_s": 0.0}


def _service(outcome: Outcome | None, **config: Any) -> RewardService:
    service = RewardService(ServiceConfig(**{**FAST, **config}))
    service.pool = _Pool(outcome)  # type: ignore[assignment]
    return service


def _request(body: bytes, headers: Mapping[str, str] | None = None) -> Request:
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    raw.append((b"content-length", str(len(body)).encode()))
    return Request({"type": "http", "method": "POST", "path": "/score", "headers": raw}, receive)


def _body(label: Any = "7", response: str = "\\boxed{7}") -> bytes:
    return json.dumps({"prompt": "p", "response": response, "label": label}).encode()


def _reply(response: Response) -> tuple[int, str, dict[str, str]]:
    headers = {k: v for k, v in response.headers.items() if k not in ("content-length", "content-type")}
    return response.status_code, bytes(response.body).decode(), headers


def _counted(service: RewardService) -> dict[str, float]:
    """The /metrics series that are not zero, fallback share and timings left out."""
    series = parse_text(service.metrics.render(service.pool.state()))
    return {k: v for k, v in series.items() if v and not k.startswith(("rlcheck_reward_request_duration",
                                                                        "rlcheck_reward_scorer_processes"))}


P = "rlcheck_reward_"
OK = Outcome(status="ok", value=1.0, detail="")
PENDING = "scoring still running; the retry of this request gets its reward"
CLOSING = "shutting down; the retry of this request gets its reward from another replica"

REPLIES = [
    # outcome of the scoring, config, label sent, status, body, X-Reward-Status (None: none), series counted
    (OK, {}, "7", 200, "1.0", "ok", {f'{P}requests_total{{code="200"}}': 1, f'{P}scores_total{{value="1.0"}}': 1,
                                     f"{P}fallback_share_replies": 1}),
    (Outcome(status="ok", value=0.0), {}, "7", 200, "0.0", "ok",
     {f'{P}requests_total{{code="200"}}': 1, f'{P}scores_total{{value="0.0"}}': 1, f"{P}fallback_share_replies": 1}),
    (OK, {"reward_key": "score"}, "7", 200, '{"score": 1.0}', "ok",
     {f'{P}requests_total{{code="200"}}': 1, f'{P}scores_total{{value="1.0"}}': 1, f"{P}fallback_share_replies": 1}),
    (Outcome(status="timeout", value=None, detail="cpu"), {"fallback_reward": -1.0}, "7", 200, "-1.0", "timeout",
     {f'{P}requests_total{{code="200"}}': 1, f'{P}scores_total{{value="-1.0"}}': 1, f"{P}scorer_timeouts_total": 1,
      f'{P}fallbacks_total{{reason="timeout"}}': 1, f"{P}fallback_share": 1, f"{P}fallback_share_replies": 1,
      f"{P}fallbacks_last_minute": 1}),
    (Outcome(status="error", value=None, detail="boom"), {}, "7", 200, "0.0", "error",
     {f'{P}requests_total{{code="200"}}': 1, f'{P}scores_total{{value="0.0"}}': 1, f"{P}scorer_errors_total": 1,
      f'{P}fallbacks_total{{reason="error"}}': 1, f"{P}fallback_share": 1, f"{P}fallback_share_replies": 1,
      f"{P}fallbacks_last_minute": 1}),
    (Outcome(status="ok", value=None), {}, "7", 200, "0.0", "ok",  # no value: never a reward
     {f'{P}requests_total{{code="200"}}': 1, f'{P}scores_total{{value="0.0"}}': 1, f"{P}scorer_errors_total": 1,
      f'{P}fallbacks_total{{reason="ok"}}': 1, f"{P}fallback_share": 1, f"{P}fallback_share_replies": 1,
      f"{P}fallbacks_last_minute": 1}),
    (OK, {"fallback_reward": 0.5}, None, 200, "0.5", "error",  # a label that cannot be graded: never scored
     {f'{P}requests_total{{code="200"}}': 1, f'{P}scores_total{{value="0.5"}}': 1, f"{P}scorer_errors_total": 1,
      f'{P}fallbacks_total{{reason="label"}}': 1, f"{P}fallback_share": 1, f"{P}fallback_share_replies": 1,
      f"{P}fallbacks_last_minute": 1}),
    (Outcome(status="unavailable", value=None, detail="no scorer process free"), {}, "7", 503,
     '{"detail":"no scorer process free"}', None,
     {f'{P}requests_total{{code="503"}}': 1, f'{P}unavailable_total{{reason="unavailable"}}': 1}),
    (Outcome(status="starved", value=None, detail="no progress"), {}, "7", 503, '{"detail":"no progress"}', None,
     {f'{P}requests_total{{code="503"}}': 1, f'{P}unavailable_total{{reason="starved"}}': 1}),
    (None, {}, "7", 503, json.dumps({"detail": PENDING}, separators=(",", ":")), None,
     {f'{P}requests_total{{code="503"}}': 1, f'{P}unavailable_total{{reason="pending"}}': 1}),
]


@pytest.mark.parametrize(("outcome", "config", "label", "status", "body", "reward_status", "counted"), REPLIES)
def test_rules_reward_app_replies(outcome: Outcome | None, config: dict[str, Any], label: Any, status: int,
                                  body: str, reward_status: str | None, counted: dict[str, float]) -> None:
    service = _service(outcome, **config)
    got = _reply(asyncio.run(service.score(_request(_body(label), {"X-Request-ID": "req-1"}))))
    headers = {"x-request-id": "req-1"}
    if reward_status is not None:
        headers["x-reward-status"] = reward_status
    if status == 503:
        headers["retry-after"] = "2"
    assert got == (status, body, headers)
    assert _counted(service) == counted
    assert service.metrics.in_flight == 0 and service.metrics.latency.count == 1
    assert service.pool.scored == ([] if label is None else [("\\boxed{7}", ("7",))])  # type: ignore[attr-defined]


REJECTED = [
    # body, config, status, detail, whether the connection is closed
    (b"{", {}, 422, None, False),
    (_body(label="7", response="x" * 2000), {"max_body_bytes": 1024}, 413,
     "body is 2045 bytes: the limit is 1024 bytes (--max-body-bytes)", True),
]


@pytest.mark.parametrize(("body", "config", "status", "detail", "closed"), REJECTED)
def test_rules_reward_app_rejected_bodies(body: bytes, config: dict[str, Any], status: int, detail: str | None,
                                          closed: bool) -> None:
    service = _service(OK, **config)
    got_status, got_body, headers = _reply(asyncio.run(service.score(_request(body, {"X-Request-ID": "r"}))))
    assert got_status == status
    if detail is not None:
        assert json.loads(got_body) == {"detail": detail}
    assert headers == {"x-request-id": "r", **({"connection": "close"} if closed else {})}
    assert _counted(service) == {f'{P}requests_total{{code="{status}"}}': 1}
    assert service.pool.scored == []  # type: ignore[attr-defined]


REQUEST_IDS = [("req-1", "req-1"), ("a" * 64, "a" * 64), ("A.b_c:d-9", "A.b_c:d-9"), ("a" * 65, None),
               ("bad id", None), ("", None), ("x\u00e9", None), (None, None)]


@pytest.mark.parametrize(("sent", "kept"), REQUEST_IDS)
def test_rules_reward_app_request_id(sent: str | None, kept: str | None) -> None:
    service = _service(OK)
    headers = {} if sent is None else {"X-Request-ID": sent}
    request = _request(_body(), headers) if sent is None or sent.isascii() else _request_raw(_body(), sent)
    got = _reply(asyncio.run(service.score(request)))[2]["x-request-id"]
    if kept is None:
        assert len(got) == 16 and all(c in "0123456789abcdef" for c in got)
    else:
        assert got == kept


def _request_raw(body: bytes, request_id: str) -> Request:
    request = _request(body)
    request.scope["headers"].append((b"x-request-id", request_id.encode("latin-1")))
    return request


def test_rules_reward_app_closing_closes_connections() -> None:
    async def body() -> None:
        service = _service(OK)
        service.health_pool = _Pool(OK)  # type: ignore[assignment]
        service.begin_shutdown()
        assert service.closing and service.pool.closing  # type: ignore[attr-defined]
        got = _reply(await service.score(_request(_body(), {"X-Request-ID": "r"})))
        assert got == (200, "1.0", {"x-request-id": "r", "connection": "close", "x-reward-status": "ok"})
        pending = _service(None)
        pending.begin_shutdown()
        got = _reply(await pending.score(_request(_body(), {"X-Request-ID": "r"})))
        assert got == (503, json.dumps({"detail": CLOSING}, separators=(",", ":")),
                       {"x-request-id": "r", "connection": "close", "retry-after": "2"})
    asyncio.run(body())


def test_rules_reward_app_shutdown_ends_the_wait_after_the_grace() -> None:
    async def body() -> None:
        service = _service(None, reply_mode="wait", wait_reply_s=3000.0)  # grace min(3000, 2.0) = 2 s
        loop = asyncio.get_running_loop()
        service.begin_shutdown()
        assert not service._stop_waiting.is_set()
        handles = [h for h in loop._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
        assert [round(h.when() - loop.time(), 1) for h in handles] == [2.0]
        service._stop_waiting.set()  # what the timer does
        reply = await asyncio.wait_for(service.score(_request(_body())), 5)  # not the 3000 s wait
        assert json.loads(bytes(reply.body)) == {"detail": CLOSING} and reply.status_code == 503
    asyncio.run(body())


def test_rules_reward_app_retry_finds_the_scoring() -> None:
    async def body() -> None:
        service = _service(OK)
        for _ in range(2):
            assert (await service.score(_request(_body()))).status_code == 200
        assert service.pool.scored == [("\\boxed{7}", ("7",))]  # type: ignore[attr-defined]
        assert service.results.reused == 1
    asyncio.run(body())


def test_rules_reward_app_drained() -> None:
    async def body() -> None:
        service = _service(OK)
        await asyncio.wait_for(service.drained(quiet_s=0.0), 5)  # nothing in flight, nothing arrived: at once
        service.metrics.in_flight = 1
        await asyncio.wait_for(service.drained(quiet_s=0.0, max_s=0.1), 5)  # in flight: only the bound ends it
        service.metrics.in_flight = 0
        service._last_request = asyncio.get_running_loop().time() + 3600  # a request just now: not quiet
        await asyncio.wait_for(service.drained(quiet_s=1.0, max_s=0.1), 5)
    asyncio.run(body())


def _health(service: RewardService) -> tuple[int, dict[str, Any]]:
    reply = asyncio.run(service.health())
    body = json.loads(bytes(reply.body))
    assert isinstance(body.pop("elapsed_s"), float)
    return reply.status_code, body


def test_rules_reward_app_health_ok() -> None:
    service = _service(OK)
    state = PoolState(idle=1, busy=2, slow=3, starting=4, queued=5, retired={}, spawn_failures=0, last_spawn_error="")
    service.pool = _Pool(OK, state=state)  # type: ignore[assignment]
    service.health_pool = _Pool(by_label={p.label: Outcome(status="ok", value=p.expected)  # type: ignore[assignment]
                                          for p in HEALTH_PAIRS["slime_math"]})
    assert _health(service) == (200, {"status": "ok", "backend": "slime_math", "problems": [],
                                      "scorer_processes": {"idle": 1, "busy": 2, "slow": 3, "starting": 4},
                                      "queued": 5})
    assert service.metrics.health.values == {"ok": 1}


HEALTH_PROBLEMS = [
    # health outcome per pair, request pool state, problems
    ({"x^2+2x+1": Outcome(status="ok", value=0.0), "8": Outcome(status="ok", value=0.0)},
     PoolState(idle=1, busy=0, slow=0, starting=0, queued=0, retired={}, spawn_failures=0, last_spawn_error=""),
     ["'so the answer is \\\\boxed{(x+1)^2}' vs label 'x^2+2x+1': got ok 0.0, expected 1.0"]),
    ({"x^2+2x+1": Outcome(status="timeout", value=None, detail="cpu budget"), "8": Outcome(status="ok", value=1.0)},
     PoolState(idle=0, busy=0, slow=0, starting=1, queued=0, retired={}, spawn_failures=0, last_spawn_error=""),
     ["'so the answer is \\\\boxed{(x+1)^2}' vs label 'x^2+2x+1': got timeout None cpu budget, expected 1.0",
      "'so the answer is \\\\boxed{7}' vs label '8': got ok 1.0, expected 0.0"]),
    ({"x^2+2x+1": Outcome(status="ok", value=1.0), "8": Outcome(status="ok", value=0.0)},
     PoolState(idle=0, busy=0, slow=0, starting=0, queued=0, retired={}, spawn_failures=3, last_spawn_error="OOM"),
     ["no scorer process is running: OOM"]),
    ({"x^2+2x+1": Outcome(status="ok", value=1.0), "8": Outcome(status="ok", value=0.0)},
     PoolState(idle=0, busy=0, slow=0, starting=0, queued=0, retired={}, spawn_failures=0, last_spawn_error=""),
     ["no scorer process is running: unknown"]),
]


@pytest.mark.parametrize(("outcomes", "state", "problems"), HEALTH_PROBLEMS)
def test_rules_reward_app_health_problems(outcomes: dict[str, Outcome], state: PoolState,
                                          problems: list[str]) -> None:
    service = _service(OK)
    service.pool = _Pool(OK, state=state)  # type: ignore[assignment]
    service.health_pool = _Pool(by_label=outcomes)  # type: ignore[assignment]
    assert _health(service) == (503, {"status": "fail", "backend": "slime_math", "problems": problems,
                                      "scorer_processes": {"idle": state.idle, "busy": state.busy,
                                                           "slow": state.slow, "starting": state.starting},
                                      "queued": 0})
    assert service.metrics.health.values == {"fail": 1}


@pytest.mark.parametrize("process", ["idle", "busy", "slow", "starting"])
def test_rules_reward_app_health_any_process_counts(process: str) -> None:
    service = _service(OK)
    fields = {"idle": 0, "busy": 0, "slow": 0, "starting": 0, process: 1}
    service.pool = _Pool(OK, state=PoolState(**fields, queued=0, retired={}, spawn_failures=0,  # type: ignore[assignment]
                                             last_spawn_error=""))
    service.health_pool = _Pool(by_label={p.label: Outcome(status="ok", value=p.expected)  # type: ignore[assignment]
                                          for p in HEALTH_PAIRS["slime_math"]})
    assert _health(service)[0] == 200


def test_rules_reward_app_health_pool_and_routes() -> None:
    config = ServiceConfig(backend="boxed", workers=3, scorer_timeout_s=1.0, scorer_wall_timeout_s=4.0,
                           demote_after_cpu_s=0.1)
    app = create_app(config)
    service = app.state.service
    assert (service.pool.size, service.pool.backend, service.pool.wall_timeout_s) == (3, "boxed", 600.0)
    health = service.health_pool
    assert (health.backend, health.size, health.max_slow, health.timeout_s, health.wall_timeout_s,
            health.demote_after_cpu_s, health.max_queue_wait_s) == ("boxed", len(HEALTH_PAIRS["boxed"]), 0, 1.0, 4.0,
                                                                    0, 4.0)
    routes = {(r.path, tuple(sorted(r.methods))) for r in app.routes}  # type: ignore[attr-defined]
    assert routes == {("/score", ("POST",)), ("/", ("POST",)), ("/health", ("GET",)), ("/metrics", ("GET",))}


def test_rules_reward_app_metrics_route() -> None:
    service = _service(OK)
    reply = asyncio.run(service.render_metrics())
    assert reply.media_type == CONTENT_TYPE
    assert bytes(reply.body).decode() == service.metrics.render(service.pool.state())


T = "rlcheck-reward: "
LOGS = [
    # outcome, label, response, (level, message) logged
    (Outcome(status="timeout", value=None, detail="cpu", worker_pid=42, scoring_s=1.5), "1" * 100, "x" * 90 + "END",
     ("WARNING", f"{T}scorer timeout request_id=req-1 backend=slime_math after 1.500 s: cpu -> fallback -1.0 (scorer "
                 f"process 42 killed; label {'1' * 80!r}; response tail {'x' * 77 + 'END'!r})")),
    (Outcome(status="error", value=None, detail="boom", worker_pid=7, scoring_s=0.25), "7", "\\boxed{7}",
     ("WARNING", f"{T}scorer error request_id=req-1 backend=slime_math after 0.250 s: boom -> fallback -1.0 (scorer "
                 "process 7 retired; label '7'; response tail '\\\\boxed{7}')")),
    (OK, None, "\\boxed{7}",
     ("WARNING", f"{T}label error request_id=req-1: label: missing or null; math scorers need the reference answer "
                 "(check SLIME's --label-key) -> fallback -1.0")),
    (Outcome(status="unavailable", value=None, detail="none free"), "7", "\\boxed{7}",
     ("ERROR", f"{T}request_id=req-1: none free -> 503")),
    (None, "7", "\\boxed{7}", ("INFO", f"{T}request_id=req-1: {PENDING} -> 503")),
    (OK, "7", "\\boxed{7}", None),
]


@pytest.mark.parametrize(("outcome", "label", "response", "logged"), LOGS)
def test_rules_reward_app_logs(caplog: pytest.LogCaptureFixture, outcome: Outcome | None, label: Any,
                               response: str, logged: tuple[str, str] | None) -> None:
    service = _service(outcome, fallback_reward=-1.0)
    with caplog.at_level(logging.DEBUG, logger="rlcheck.reward"):
        asyncio.run(service.score(_request(_body(label, response), {"X-Request-ID": "req-1"})))
    got = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "rlcheck.reward"]
    assert got == ([] if logged is None else [logged])


def test_rules_reward_app_logs_a_rejected_body(caplog: pytest.LogCaptureFixture) -> None:
    service = _service(OK)
    with caplog.at_level(logging.DEBUG, logger="rlcheck.reward"):
        asyncio.run(service.score(_request(b"[]", {"X-Request-ID": "req-1"})))
    got = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "rlcheck.reward"]
    assert got == [("WARNING", f"{T}rejected request_id=req-1 with 422: body must be a JSON object (SLIME's remote_rm "
                               "posts {prompt, response, label}), got list")]


def test_rules_reward_app_start_and_stop(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        service = _service(OK, workers=3, fallback_reward=0.5, keep_alive_s=20)
        service.health_pool = _Pool(OK)  # type: ignore[assignment]
        with caplog.at_level(logging.DEBUG, logger="rlcheck.reward"):
            await service.start()
            service.metrics.in_flight = 4
            service.begin_shutdown()
        assert service.pool.started and service.health_pool.started  # type: ignore[attr-defined]
        assert [r.getMessage() for r in caplog.records if r.name == "rlcheck.reward"] == [
            f"{T}ready: backend=slime_math scorer processes=3 timeout=0.01s fallback=0.5 keep-alive=20s",
            f"{T}shutting down: 4 requests in flight get their reward within 0.05 s or 503; 0 scorings waiting for a "
            "process get 503 now"]
        await service.stop()
        assert service.pool.closed_after_s == 1.05 and service.health_pool.closed_after_s == 1.0  # type: ignore
    asyncio.run(body())


def test_rules_reward_app_pool_settings_and_app() -> None:
    config = ServiceConfig(backend="math_verify", workers=3, max_slow_workers=5, scorer_timeout_s=1.5,
                           scorer_wall_timeout_s=4.0, demote_after_cpu_s=0.3, max_queue_wait_s=7.0, max_queued=9,
                           scoring_max_wall_s=20.0, worker_max_memory_bytes=512 * 1024**2)
    app = create_app(config)
    pool = app.state.service.pool
    assert (pool.backend, pool.size, pool.max_slow, pool.timeout_s, pool.demote_after_cpu_s, pool.max_queue_wait_s,
            pool.max_memory_bytes, pool.wall_timeout_s, pool.max_queued) == (
        "math_verify", 3, 5, 1.5, 0.3, 7.0, 512 * 1024**2, 20.0, 9)
    assert app.state.service.health_pool.max_memory_bytes == 512 * 1024**2
    assert (app.title, app.docs_url, app.redoc_url, app.openapi_url) == ("rlcheck remote_rm reward service", None,
                                                                         None, None)
    in_schema = {r.path: r.include_in_schema for r in app.routes}  # type: ignore[attr-defined]
    assert in_schema == {"/score": True, "/": False, "/health": True, "/metrics": True}
    assert {r.path: r.endpoint for r in app.routes} == {  # type: ignore[attr-defined]
        "/score": app.state.service.score, "/": app.state.service.score, "/health": app.state.service.health,
        "/metrics": app.state.service.render_metrics}


def test_rules_reward_app_lifespan_starts_and_stops_the_pools() -> None:
    async def body() -> None:
        app = create_app(ServiceConfig(**FAST))
        service = app.state.service
        service.pool, service.health_pool = _Pool(OK), _Pool(OK)
        async with app.router.lifespan_context(app):
            assert service.pool.started and service.health_pool.started
            assert not hasattr(service.pool, "closed_after_s")
        assert service.pool.closed_after_s == 1.05 and service.health_pool.closed_after_s == 1.0
    asyncio.run(body())


def test_rules_reward_app_shutdown_timer_stops_the_waits() -> None:
    async def body() -> None:
        service = _service(OK)  # grace min(0.05 s wall timeout, 2.0)
        service.begin_shutdown()
        assert 0 <= time.monotonic() - service._last_request < 60  # the quiet period counts from now
        assert not service._stop_waiting.is_set()
        await asyncio.wait_for(service._stop_waiting.wait(), 10)  # set by its own timer
    asyncio.run(body())


def test_rules_reward_app_drained_waits_for_requests() -> None:
    async def body() -> None:
        service = _service(OK)
        service.metrics.in_flight = 1
        waiting = asyncio.ensure_future(service.drained(quiet_s=0.0, max_s=30.0))
        await asyncio.sleep(0.15)
        assert not waiting.done()  # a request in flight
        service.metrics.in_flight = 0
        service._last_request = time.monotonic() + 3600  # and one just arrived
        await asyncio.sleep(0.15)
        assert not waiting.done()
        service._last_request = 0.0
        await asyncio.wait_for(waiting, 10)
    asyncio.run(body())


@pytest.mark.parametrize("counts", [{"idle": 1, "busy": 1}, {"busy": 1, "slow": 1}, {"slow": 1, "starting": 1},
                                    {"idle": 1, "starting": 1}])
def test_rules_reward_app_health_sums_every_process(counts: dict[str, int]) -> None:
    service = _service(OK)
    fields = {"idle": 0, "busy": 0, "slow": 0, "starting": 0, **counts}
    service.pool = _Pool(OK, state=PoolState(**fields, queued=0, retired={}, spawn_failures=0,  # type: ignore
                                             last_spawn_error=""))
    service.health_pool = _Pool(by_label={p.label: Outcome(status="ok", value=p.expected)  # type: ignore[assignment]
                                          for p in HEALTH_PAIRS["slime_math"]})
    assert _health(service)[0] == 200


def test_rules_reward_app_stalled_body_is_408() -> None:
    async def receive() -> dict[str, Any]:
        if not sent:
            sent.append(1)
            return {"type": "http.request", "body": b'{"prompt": ', "more_body": True}
        await asyncio.Event().wait()  # the client stalls
        raise AssertionError("unreachable")

    sent: list[int] = []
    request = Request({"type": "http", "method": "POST", "path": "/score",
                       "headers": [(b"x-request-id", b"r")]}, receive)
    service = _service(OK, read_timeout_s=0.1)
    status, _, headers = _reply(asyncio.run(asyncio.wait_for(service.score(request), 10)))
    assert (status, headers) == (408, {"x-request-id": "r", "connection": "close"})


def test_rules_reward_app_reply_bookkeeping() -> None:
    async def body() -> None:
        service = _service(OK)
        service.metrics.in_flight = 5  # five other requests being handled
        before = time.perf_counter()
        reply = await service.score(_request(_body(), {"X-Request-ID": "r"}))
        elapsed = time.perf_counter() - before
        assert reply.headers["content-type"] == "application/json"
        assert service.metrics.in_flight == 5
        assert 0 <= service.metrics.latency.total <= elapsed
        assert 0 <= time.monotonic() - service._last_request < 60
        other = await service.score(_request(_body(label="8"), {"X-Request-ID": "r"}))
        assert bytes(other.body) == b"1.0"
        assert service.pool.scored == [("\\boxed{7}", ("7",)), ("\\boxed{7}", ("8",))]  # type: ignore[attr-defined]
        assert service.results.reused == 0  # another body is another scoring
    asyncio.run(body())


def test_rules_reward_app_health_scores_the_known_pairs() -> None:
    service = _service(OK)
    service.health_pool = _Pool(by_label={p.label: Outcome(status="ok", value=p.expected)  # type: ignore[assignment]
                                          for p in HEALTH_PAIRS["slime_math"]})
    before = time.perf_counter()
    reply = asyncio.run(service.health())
    elapsed = time.perf_counter() - before
    assert service.health_pool.scored == [(p.response, (p.label,))  # type: ignore[attr-defined]
                                          for p in HEALTH_PAIRS["slime_math"]]
    took = json.loads(bytes(reply.body))["elapsed_s"]
    assert 0 <= took <= elapsed + 0.0001 and took == round(took, 4)


def test_rules_reward_app_another_response_is_another_scoring() -> None:
    async def body() -> None:
        service = _service(OK)
        for response in ("\\boxed{7}", "so the answer is \\boxed{8}"):  # one label, two answers
            assert (await service.score(_request(_body(label="7", response=response)))).status_code == 200
        assert service.pool.scored == [("\\boxed{7}", ("7",)),  # type: ignore[attr-defined]
                                       ("so the answer is \\boxed{8}", ("7",))]
        assert service.results.reused == 0
    asyncio.run(body())


class _Clock:
    """time.monotonic for drained(), and its asyncio.sleep: each sleep is recorded and moves the clock by `step`
    (a loaded host: a 0.05 s sleep may take far longer), so the loop's checks are counted, not timed."""

    def __init__(self, now: float, step: float = 2.0) -> None:
        self.now, self.step = now, step
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += self.step


DRAINED = [
    # clock at the call, last request (None: none yet), requests in flight, drained()'s arguments, sleeps taken
    (1000.0, 999.0, 0, {}, 0),  # quiet for exactly the default 1 s: at once
    (1000.0, 999.5, 0, {}, 1),  # quiet for 0.5 s: one sleep (the clock moves 2 s)
    (1000.0, 998.0, 0, {"quiet_s": 2.0}, 0),
    (1000.0, 998.5, 0, {"quiet_s": 2.0}, 1),
    (1.0, None, 0, {}, 0),  # no request since the start, on a host up for 1 s: already quiet
    (1000.0, 0.0, 1, {}, 15),  # always in flight: checks at 1000, 1002 ... 1028, none at the 30 s deadline
    (1000.0, 0.0, 1, {"max_s": 4.0}, 2),
    (1000.0, 0.0, 1, {"max_s": 4.5}, 3),
]


@pytest.mark.parametrize(("now", "last", "in_flight", "kwargs", "sleeps"), DRAINED)
def test_rules_reward_app_drained_checks(monkeypatch: pytest.MonkeyPatch, now: float, last: float | None,
                                         in_flight: int, kwargs: dict[str, float], sleeps: int) -> None:
    service = _service(OK)
    clock = _Clock(now)
    monkeypatch.setattr(app_module, "time", clock)
    monkeypatch.setattr(app_module, "asyncio", clock)
    if last is not None:
        service._last_request = last
    service.metrics.in_flight = in_flight
    asyncio.run(service.drained(**kwargs))
    assert clock.slept == [0.05] * sleeps
