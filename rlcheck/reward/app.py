"""The FastAPI app: POST /score (and /), GET /health, GET /metrics.

Error policy, in one place:
- a body that is not {prompt, response, label} of the right types: 422 with what is wrong;
- a body over max_body_bytes: 413; a body not complete within read_timeout_s: 408; a client gone
  mid-body: logged (one line) and counted as 499, nothing to reply to;
- a label that cannot be graded (null, bool, object, empty list), a scoring that used up its CPU budget
  or failed: 200 with the fallback reward, counted by reason in /metrics (also as a recent share and a
  per-minute count) and logged with the request id (X-Request-ID; X-Reward-Status says ok, timeout or
  error). Nothing else ever gets the fallback: how busy the host is never changes a reward;
- a scoring not done within the request's wait (reply_mode retry: scorer_wall_timeout_s; wait:
  wait_reply_s): 503 + Retry-After, and the scoring goes on; a retry of the same body gets its result
  (results.py);
- more than max_queued scorings waiting, none free within max_queue_wait_s, a scoring with no progress
  within the safety bound, or shutting down: 503 with Retry-After (SLIME retries it).
After SIGTERM every request is answered: its reward when its scoring ends within shutdown_grace_s, else
503 + Retry-After; those replies close their connection, and requests that arrive while it drains get
the same (server.py keeps accepting until nothing is in flight).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from rlcheck.reward.config import ServiceConfig
from rlcheck.reward.metrics import CONTENT_TYPE, ServiceMetrics
from rlcheck.reward.payload import PayloadError, ScorePayload, parse_payload, read_body
from rlcheck.reward.pool import Outcome, ScorerPool
from rlcheck.reward.results import ScoringResults, content_key
from rlcheck.reward.scorers import HEALTH_PAIRS

log = logging.getLogger("rlcheck.reward")
_TAIL_CHARS = 80
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class RewardService:
    def __init__(self, config: ServiceConfig) -> None:
        self.config, self.metrics = config, ServiceMetrics()
        self.pool = ScorerPool(backend=config.backend, size=config.workers, max_slow=config.max_slow_workers,
                               timeout_s=config.scorer_timeout_s, demote_after_cpu_s=config.demote_after_cpu_s,
                               max_queue_wait_s=config.max_queue_wait_s,
                               max_memory_bytes=config.worker_max_memory_bytes,
                               wall_timeout_s=config.scoring_max_wall_s, max_queued=config.max_queued)
        self.results = ScoringResults(ttl_s=config.results_ttl_s)
        self._stop_waiting = asyncio.Event()  # set shutdown_grace_s after SIGTERM: waiting requests get 503
        self.closing = False
        self._last_request = 0.0
        # /health scores through processes of its own: the same code path, never behind a queue of requests,
        # and one per known pair so that both are scored at once.
        self.health_pool = ScorerPool(backend=config.backend, size=len(HEALTH_PAIRS[config.backend]), max_slow=0,
                                      timeout_s=config.scorer_timeout_s, wall_timeout_s=config.scorer_wall_timeout_s,
                                      demote_after_cpu_s=0, max_queue_wait_s=config.scorer_wall_timeout_s,
                                      max_memory_bytes=config.worker_max_memory_bytes)

    async def start(self) -> None:
        await self.pool.start()
        await self.health_pool.start()
        log.info("rlcheck-reward: ready: backend=%s scorer processes=%d timeout=%ss fallback=%s keep-alive=%ds",
                 self.config.backend, self.config.workers, self.config.scorer_timeout_s,
                 self.config.fallback_reward, self.config.keep_alive_s)

    def begin_shutdown(self) -> None:
        """Called once SIGTERM arrived, before uvicorn waits for requests: every request in flight is answered
        within shutdown_grace_s (its reward, or 503 + Retry-After)."""
        state = self.pool.state()
        log.info("rlcheck-reward: shutting down: %d requests in flight get their reward within %g s or 503; "
                 "%d scorings waiting for a process get 503 now", self.metrics.in_flight,
                 self.config.shutdown_grace_s, state.queued)
        self.closing = True
        self._last_request = time.monotonic()  # the quiet period counts from SIGTERM at the earliest
        asyncio.get_running_loop().call_later(self.config.shutdown_grace_s, self._stop_waiting.set)
        self.pool.begin_close()

    async def drained(self, quiet_s: float = 1.0, max_s: float = 30.0) -> None:
        """Return once no request is in flight and none has arrived for quiet_s (at most max_s)."""
        deadline = time.monotonic() + max_s
        while time.monotonic() < deadline:
            if self.metrics.in_flight == 0 and time.monotonic() - self._last_request >= quiet_s:
                return
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        await self.pool.close(drain_s=self.config.shutdown_grace_s + 1)
        await self.health_pool.close(drain_s=1.0)

    async def score(self, request: Request) -> Response:
        started = time.perf_counter()
        request_id = request.headers.get("x-request-id", "")
        if not _REQUEST_ID.fullmatch(request_id):  # a client's id is kept only if it is safe to log
            request_id = uuid.uuid4().hex[:16]
        self.metrics.in_flight += 1
        self._last_request = time.monotonic()
        try:
            response = await self._score(request, request_id)
        finally:
            self.metrics.in_flight -= 1
        self.metrics.requests.inc(str(response.status_code))
        self.metrics.latency.observe(time.perf_counter() - started)
        return response

    async def _score(self, request: Request, request_id: str) -> Response:
        headers = {"X-Request-ID": request_id}
        try:
            payload = parse_payload(await read_body(request, self.config.max_body_bytes, self.config.read_timeout_s))
        except PayloadError as exc:
            log.warning("rlcheck-reward: rejected request_id=%s with %d: %s", request_id, exc.status, exc.message)
            if exc.status != 422:  # the rest of a body that was cut short must not be read as a next request
                headers["Connection"] = "close"
            return JSONResponse({"detail": exc.message}, status_code=exc.status, headers=headers)
        if self.closing:  # the client must not send its retry down a connection that is about to close
            headers["Connection"] = "close"
        if payload.label_problem:
            outcome: Outcome | None = Outcome(status="error", value=None, detail=payload.label_problem)
        else:
            outcome = await self._scoring(payload)
        if outcome is None or outcome.status in ("unavailable", "starved"):
            detail = outcome.detail if outcome else (
                "scoring still running; the retry of this request gets its reward" if not self.closing
                else "shutting down; the retry of this request gets its reward from another replica")
            self.metrics.unavailable.inc(outcome.status if outcome else "pending")
            log.log(logging.ERROR if outcome else logging.INFO, "rlcheck-reward: request_id=%s: %s -> 503",
                    request_id, detail)
            return JSONResponse({"detail": detail}, status_code=503, headers={**headers, "Retry-After": "2"})
        if outcome.status == "ok" and outcome.value is not None:
            value = outcome.value
            self.metrics.reward_replied(None)
        else:
            value = self._fallback(request_id, payload, outcome)
        self.metrics.score_value(value)
        body = json.dumps(value if self.config.reward_key is None else {self.config.reward_key: value})
        return Response(body, media_type="application/json", headers={**headers, "X-Reward-Status": outcome.status})

    async def _scoring(self, payload: ScorePayload) -> Outcome | None:
        """The scoring's outcome, or None when it did not end within this request's wait (it goes on)."""
        key = content_key(payload.response, payload.labels)
        future = self.results.scoring(key, lambda: self.pool.score(payload.response, payload.labels))
        if not future.done():
            stop = asyncio.ensure_future(self._stop_waiting.wait())
            waiters: set[asyncio.Future[Any]] = {future, stop}
            try:
                await asyncio.wait(waiters, timeout=self.config.reply_wait_s,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
        return future.result() if future.done() else None

    def _fallback(self, request_id: str, payload: ScorePayload, outcome: Outcome) -> float:
        (self.metrics.timeouts if outcome.status == "timeout" else self.metrics.errors).inc()
        reason = "label" if payload.label_problem else outcome.status
        self.metrics.reward_replied(reason)
        action = "killed" if outcome.status == "timeout" else "retired"
        if payload.label_problem:
            log.warning("rlcheck-reward: label error request_id=%s: %s -> fallback %s", request_id,
                        payload.label_problem, self.config.fallback_reward)
            return self.config.fallback_reward
        log.warning("rlcheck-reward: scorer %s request_id=%s backend=%s after %.3f s: %s -> fallback %s "
                    "(scorer process %s %s; label %r; response tail %r)", outcome.status, request_id,
                    self.config.backend, outcome.scoring_s, outcome.detail, self.config.fallback_reward,
                    outcome.worker_pid, action, payload.labels[0][:_TAIL_CHARS], payload.response[-_TAIL_CHARS:])
        return self.config.fallback_reward

    async def health(self) -> Response:
        """200 only when a scorer process scores known pairs right and the request pool has processes."""
        started = time.perf_counter()
        problems = []
        pairs = HEALTH_PAIRS[self.config.backend]
        outcomes = await asyncio.gather(*(self.health_pool.score(pair.response, (pair.label,)) for pair in pairs))
        for pair, outcome in zip(pairs, outcomes, strict=True):
            if outcome.status != "ok" or outcome.value != pair.expected:
                got = " ".join(part for part in (outcome.status, str(outcome.value), outcome.detail) if part)
                problems.append(f"{pair.response!r} vs label {pair.label!r}: got {got}, expected {pair.expected}")
        state = self.pool.state()
        if state.idle + state.busy + state.slow + state.starting == 0:
            problems.append(f"no scorer process is running: {state.last_spawn_error or 'unknown'}")
        self.metrics.health.inc("fail" if problems else "ok")
        body = {"status": "fail" if problems else "ok", "backend": self.config.backend, "problems": problems,
                "scorer_processes": {"idle": state.idle, "busy": state.busy, "slow": state.slow,
                                     "starting": state.starting},
                "queued": state.queued, "elapsed_s": round(time.perf_counter() - started, 4)}
        return JSONResponse(body, status_code=503 if problems else 200)

    async def render_metrics(self) -> Response:  # async: it reads pool state owned by the event loop
        return PlainTextResponse(self.metrics.render(self.pool.state()), media_type=CONTENT_TYPE)


def create_app(config: ServiceConfig) -> FastAPI:
    service = RewardService(config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.start()
        try:
            yield
        finally:
            await service.stop()

    app = FastAPI(title="rlcheck remote_rm reward service", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    # SLIME posts to --rm-url verbatim; its help text's example has no path, so / scores too.
    app.add_api_route("/score", service.score, methods=["POST"])
    app.add_api_route("/", service.score, methods=["POST"], include_in_schema=False)
    app.add_api_route("/health", service.health, methods=["GET"])
    app.add_api_route("/metrics", service.render_metrics, methods=["GET"])
    app.state.service = service
    return app
