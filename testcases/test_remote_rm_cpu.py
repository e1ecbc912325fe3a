"""The remote-rm test case, CPU layer: rlcheck's reward service under SLIME's own client, on loopback.

It always runs (no GPU, no cluster): the service as shipped (default options) is started as a real
process on 127.0.0.1 and called the way SLIME's remote_rm calls it (aiohttp, 64 connections, 120 s
total timeout, 10 attempts with backoff). What is asserted is what the service replied and counted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import aiohttp
import pytest

from rlcheck.e2e import runner as e2e
from rlcheck.process.wait import free_loopback_port
from rlcheck.reward.config import ServiceConfig
from rlcheck.reward.harness import ServerProcess, running_server, service_argv
from rlcheck.reward.metrics import parse_text
from rlcheck.verdict import Status, Verdict
from tests.slime_client import SLIME_CONNECTIONS, Reply, post_like_slime, slime_session

RETRIES = 10
"""SLIME's remote_rm client makes 10 attempts."""
_SERVICE = ServiceConfig()
DEADLINE_S = _SERVICE.max_queue_wait_s + _SERVICE.scorer_wall_timeout_s + 2.0
"""The service's own bound on one answer: its wait for a scorer process (behind 128 normal requests), the wall bound
once a process takes it, a kill and a reply. How much of it is used depends on the host's load (17 s seen on a
2-core host at load 9), so the bound, not a guess of the load, is what is held; a hang still fails it, and the
client's own 60 s limit."""
CHAT = [{"role": "system", "content": "Answer in \\boxed{}."}, {"role": "user", "content": "Compute it."}]


@pytest.fixture(scope="module")
def reward_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    port = free_loopback_port()
    log_path = tmp_path_factory.mktemp("remote_rm") / "reward-service.log"
    # math_verify: the grading mode whose parser the pathological inputs below reach (slime_math's guards
    # keep giant powers away from sympy, so they would not exercise the deadline)
    with running_server(service_argv(port, "--backend", "math_verify"), port=port, log_path=log_path) as server:
        yield server


def _metrics_text(server: ServerProcess) -> str:
    async def fetch() -> str:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            async with session.get(server.base_url + "/metrics") as resp:
                return await resp.text()

    return asyncio.run(fetch())


def _metrics(server: ServerProcess) -> dict[str, float]:
    return parse_text(_metrics_text(server))


def _case(i: int) -> tuple[dict[str, Any], float]:
    """The i-th request of the load: answer kinds x label spellings x prompt shapes, right or wrong."""
    n = 1000 + 37 * i
    answers = [(f"{n}", [f"{n}", f"\\boxed{{{n}}}", f"${n}$", n]),
               (f"\\frac{{{n}}}{{7}}", [f"{n}/7", f"\\frac{{{n}}}{{7}}"]),
               (f"{n}.5", [f"{n}.5", n + 0.5]),
               (f"{i % 9 + 2}\\sqrt{{3}}", [f"{i % 9 + 2}\\sqrt{{3}}", f"\\sqrt{{{3 * (i % 9 + 2) ** 2}}}"])]
    answer, labels = answers[i % len(answers)]
    right = i % 3 != 0
    response = f"Step {i}: reasoning.\nSo the final answer is $\\boxed{{{answer if right else answer + '+2'}}}$."
    prompt: Any = CHAT if i % 2 else "Compute it. Put the answer in \\boxed{}."
    return {"prompt": prompt, "response": response, "label": labels[i % len(labels)]}, (1.0 if right else 0.0)


async def _drive(url: str, payloads: list[dict[str, Any]]) -> list[Reply]:
    async with slime_session() as session:
        limit = asyncio.Semaphore(SLIME_CONNECTIONS)

        async def one(payload: dict[str, Any]) -> Reply:
            async with limit:
                return await post_like_slime(session, url, payload)

        return await asyncio.gather(*(one(p) for p in payloads))


def test_remote_rm_cpu_slime_client_load(reward_service: ServerProcess, record_verdict: Callable[..., None]) -> None:
    cases = [_case(i) for i in range(320)]
    before = _metrics(reward_service)
    replies = asyncio.run(_drive(reward_service.base_url + "/score", [payload for payload, _ in cases]))
    after_text = _metrics_text(reward_service)
    after = parse_text(after_text)

    assert [(r.status, r.attempts, r.resets) for r in replies] == [(200, 1, 0)] * len(cases)
    wrong = [(payload["response"][-40:], payload["label"], r.value) for (payload, expected), r in
             zip(cases, replies, strict=True) if r.value != expected]
    assert not wrong, f"{len(wrong)} rewards differ from the expected ones, e.g. {wrong[:3]}"
    assert {r.reward_status for r in replies} == {"ok"}

    def delta(series: str) -> float:
        return after.get(series, 0.0) - before.get(series, 0.0)

    right = sum(expected == 1.0 for _, expected in cases)
    assert delta('rlcheck_reward_requests_total{code="200"}') == len(cases)
    assert delta('rlcheck_reward_scores_total{value="1.0"}') == right
    assert delta('rlcheck_reward_scores_total{value="0.0"}') == len(cases) - right
    assert delta("rlcheck_reward_scorer_timeouts_total") == delta("rlcheck_reward_scorer_errors_total") == 0
    assert delta("rlcheck_reward_request_duration_seconds_count") == len(cases)
    # the e2e remote-rm case judges this same /metrics (fallback share included): it must read the real service
    reward_side = e2e.reward_verdict("remote-rm-cpu", e2e.reward_counts(after_text), len(cases))
    assert reward_side.status is Status.PASS, reward_side.render()
    # reached only when every assertion above held: the report shows what was measured, not UNKNOWN
    record_verdict(Verdict(check_id="x", status=Status.PASS,
                           summary=f"{len(cases)} requests from a SLIME-like client: all 200 on the first attempt, "
                                   f"{right} rewarded 1.0 as expected, the rest 0.0; metrics counted each"))


_PLAIN = {"prompt": "p", "label": "42"}
BAD_INPUTS: list[tuple[str, bytes, int, Any, str]] = [
    # name, raw body, HTTP status, reply (value, or a fragment of the 422/413 detail), X-Reward-Status
    ("invalid JSON", b'{"prompt": "p", "response": ', 422, "body is not valid JSON", ""),
    ("wrong type", json.dumps({**_PLAIN, "response": ["\\boxed{42}"]}).encode(), 422,
     "response: expected a string, got list", ""),
    # a label that cannot be graded: the counted fallback, not a 422 that SLIME would retry into a failed rollout
    ("missing label", json.dumps({"prompt": "p", "response": "\\boxed{42}"}).encode(), 200, 0.0, "error"),
    ("10 MB body", json.dumps({**_PLAIN, "response": "x" * 10_000_000}).encode(), 413, "the limit is", ""),
    ("unicode and control characters", json.dumps({**_PLAIN, "response": "Résumé ∑ 😀 \x00\x07\x1b[31m "
                                                   "\\boxed{42}"}).encode(), 200, 1.0, "ok"),
    ("lone surrogate", b'{"prompt": "p", "label": "42", "response": "\\\\boxed{42} \\ud800"}', 200, 1.0, "ok"),
    ("9^9^9^9", json.dumps({**_PLAIN, "response": "\\boxed{9^{9^{9^{9}}}}"}).encode(), 200, 0.0, "timeout"),
    ("big power", json.dumps({**_PLAIN, "response": "\\boxed{7^{12345678}}"}).encode(), 200, 0.0, "timeout"),
    ("huge binomial", json.dumps({**_PLAIN, "response": "\\boxed{\\binom{300000}{150000}}"}).encode(), 200, 0.0,
     "timeout"),
    ("20,000 nested braces", json.dumps({**_PLAIN, "response": "\\boxed{" + "{" * 20_000 + "42" + "}" * 20_000
                                         + "}"}).encode(), 200, 0.0, "timeout"),
]


async def _send_raw(session: aiohttp.ClientSession, url: str, body: bytes) -> tuple[int, str, Mapping[str, str],
                                                                                    float]:
    """One body, retried on 503 + Retry-After as SLIME's client retries it (a scoring past the wall bound on a busy
    host goes on, and the retry gets its reward); the last answer."""
    for _ in range(RETRIES):
        async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
            answer = resp.status, await resp.text(), resp.headers.copy(), time.monotonic()  # header names: any case
            if resp.status != 503 or "Retry-After" not in resp.headers:
                return answer
            await asyncio.sleep(float(resp.headers["Retry-After"]))
    return answer


async def _bad_inputs_beside_normal_load(url: str) -> tuple[list[Any], list[tuple[Reply, float]]]:
    async def normal(i: int) -> tuple[Reply, float]:
        return await post_like_slime(slime, url, _case(i)[0]), time.monotonic()

    async with slime_session() as slime, aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as raw:
        bad = [asyncio.ensure_future(_send_raw(raw, url, body)) for _, body, *_ in BAD_INPUTS]
        background = await asyncio.gather(*(normal(i) for i in range(128)))
        return list(await asyncio.gather(*bad)), background


def test_remote_rm_cpu_bad_inputs_get_their_answer_while_serving(reward_service: ServerProcess,
                                                                record_verdict: Callable[..., None]) -> None:
    before = _metrics(reward_service)
    started = time.monotonic()
    bad, background = asyncio.run(_bad_inputs_beside_normal_load(reward_service.base_url + "/score"))
    after = _metrics(reward_service)
    log = reward_service.log_path.read_text(errors="replace")

    for (name, _, status, expected, reward_status), (got_status, text, headers, done) in zip(BAD_INPUTS, bad,
                                                                                              strict=True):
        assert got_status == status, f"{name}: {got_status} {text[:200]}"
        assert done - started < DEADLINE_S, f"{name}: answered after {done - started:.1f} s"
        if status == 200:
            assert (json.loads(text), headers["X-Reward-Status"]) == (expected, reward_status), name
        else:
            assert expected in json.loads(text)["detail"], f"{name}: {text[:200]}"
        # every fallback and every rejection is logged with the id the client got back: never a silent 0.0
        assert reward_status == "ok" or f"request_id={headers['X-Request-ID']}" in log, name

    assert all(r.ok and r.value == _case(i)[1] for i, (r, _) in enumerate(background))
    first_slow_reply = min(done for (_, *_rest, kind), (_, _, _, done) in zip(BAD_INPUTS, bad, strict=True)
                           if kind == "timeout")
    served_meanwhile = sum(done < first_slow_reply for _, done in background)
    assert served_meanwhile >= len(background) // 2, f"only {served_meanwhile} normal requests were answered " \
                                                     "while the pathological ones were being scored"
    timeouts = sum(kind == "timeout" for *_, kind in BAD_INPUTS)
    assert after["rlcheck_reward_scorer_timeouts_total"] - before.get("rlcheck_reward_scorer_timeouts_total", 0) \
        == timeouts
    assert after['rlcheck_reward_requests_total{code="422"}'] - before.get(
        'rlcheck_reward_requests_total{code="422"}', 0) == 2
    assert after['rlcheck_reward_fallbacks_total{reason="label"}'] - before.get(
        'rlcheck_reward_fallbacks_total{reason="label"}', 0) == 1
    assert after['rlcheck_reward_requests_total{code="413"}'] - before.get(
        'rlcheck_reward_requests_total{code="413"}', 0) == 1
    record_verdict(Verdict(check_id="x", status=Status.PASS,
                           summary=f"{len(BAD_INPUTS)} bad inputs each got their answer within {DEADLINE_S:.0f} s "
                                   f"({timeouts} scorer timeouts, 2 x 422, 1 x 413, 1 label fallback) while "
                                   f"{served_meanwhile}/{len(background)} normal requests were served meanwhile"))
