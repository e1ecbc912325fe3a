"""The FastAPI app: POST /score (and /), GET /health, GET /metrics.

Error policy, in one place:
- a body that is not {prompt, response, label} of the right types: 422 with what is wrong;
- a body over max_body_bytes: 413; a body not complete within read_timeout_s: 408; a client gone
  mid-body: logged (one line) and counted as 499, nothing to reply to;
- a label that cannot be graded (null, bool, object, empty list), a scoring that times out or fails:
  200 with the fallback reward, counted by reason in /metrics (also as a recent share and a per-minute
  count) and logged with the request id (X-Request-ID; X-Reward-Status says ok, timeout or error);
- more than max_queued scorings waiting, none free within max_queue_wait_s, or shutting down: 503 with
  Retry-After (SLIME retries it).
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

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from rlcheck.reward.config import ServiceConfig
from rlcheck.reward.metrics import CONTENT_TYPE, ServiceMetrics
from rlcheck.reward.payload import PayloadError, ScorePayload, parse_payload, read_body
from rlcheck.reward.pool import Outcome, ScorerPool
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
                               wall_timeout_s=config.scorer_wall_timeout_s, max_queued=config.max_queued)
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
        """Called once SIGTERM arrived, before uvicorn waits for requests: waiting ones get 503 now."""
        state = self.pool.state()
        log.info("rlcheck-reward: shutting down: %d scorings waiting get 503, %d running finish",
                 state.queued, state.busy + state.slow)
        self.pool.begin_close()

    async def stop(self) -> None:
        await self.pool.close(drain_s=self.config.scorer_wall_timeout_s + 1)
        await self.health_pool.close(drain_s=1.0)

    async def score(self, request: Request) -> Response:
        started = time.perf_counter()
        request_id = request.headers.get("x-request-id", "")
        if not _REQUEST_ID.fullmatch(request_id):  # a client's id is kept only if it is safe to log
            request_id = uuid.uuid4().hex[:16]
        self.metrics.in_flight += 1
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
        if payload.label_problem:
            outcome = Outcome(status="error", value=None, detail=payload.label_problem)
        else:
            outcome = await self.pool.score(payload.response, payload.labels)
        if outcome.status == "unavailable":
            log.error("rlcheck-reward: unavailable request_id=%s: %s -> 503", request_id, outcome.detail)
            return JSONResponse({"detail": outcome.detail}, status_code=503, headers={**headers, "Retry-After": "1"})
        if outcome.status == "ok" and outcome.value is not None:
            value = outcome.value
            self.metrics.reward_replied(None)
        else:
            value = self._fallback(request_id, payload, outcome)
        self.metrics.score_value(value)
        body = json.dumps(value if self.config.reward_key is None else {self.config.reward_key: value})
        return Response(body, media_type="application/json", headers={**headers, "X-Reward-Status": outcome.status})

    def _fallback(self, request_id: str, payload: ScorePayload, outcome: Outcome) -> float:
        (self.metrics.timeouts if outcome.status == "timeout" else self.metrics.errors).inc()
        reason = ("label" if payload.label_problem else "starved" if outcome.detail.startswith("starved")
                  else outcome.status)
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
                problems.append(f"{pair.response!r} vs label {pair.label!r}: got {outcome.status} {outcome.value} "
                                f"{outcome.detail}, expected {pair.expected}".replace("  ", " "))
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
