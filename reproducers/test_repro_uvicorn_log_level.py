"""uvicorn-log-level: an uppercase log level reaches uvicorn, which dies before binding; the rollout waits forever.

Proves, with the real packages: SGLang 0.5.12.post1's ServerArgs keeps `--log-level WARN` as given;
real uvicorn rejects it (KeyError) before its socket binds, while the lowercase `warning` serves;
uvicorn 0.44 (side directory) also rejects `WARNING`; and SLIME v0.2.4's health wait (replayed step for step in
slime_wait_replay.py, SLIME not being importable here) never returns against the crashed server, though it returns
against a healthy one, while rlcheck's bounded wait ends within its timeout.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcheck.probes.recipe.sglang_flags import run_sglang
from rlcheck.process import subproc
from rlcheck.process.wait import WaitResult, free_loopback_port, wait_http_ok
from rlcheck.repro import sidecar
from rlcheck.repro.ahead import Ahead, begin
from rlcheck.repro.reproduce import Reproduction, versions_for
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "uvicorn-log-level"
SERVER = """
import sys, uvicorn
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level=sys.argv[2])
"""
# Like SGLang's launch_server process: the HTTP server dies in a thread, children keep the process alive.
SERVER_KEPT_ALIVE = SERVER.replace("uvicorn.run(app, ", "def serve():\n    uvicorn.run(app, ") + """
import threading, time
threading.Thread(target=serve).start()
time.sleep(600)
"""
SGLANG_PARSE = """
import argparse, json, sys
from sglang.srt.server_args import ServerArgs
parser = argparse.ArgumentParser()
ServerArgs.add_cli_args(parser)
ns = parser.parse_args(["--model-path", sys.argv[1], "--log-level", "WARN", "--device", "cpu"])
args = ServerArgs.from_cli_args(ns)
print("RESULT " + json.dumps({"parsed": ns.log_level, "server_args": args.log_level,
                              "http": args.log_level_http}))
"""
TINY_QWEN3 = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 64,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 512,
              "rms_norm_eps": 1e-6, "rope_theta": 1000000, "torch_dtype": "bfloat16"}


def serve(level: str, pythonpath: tuple[str, ...] = ()) -> subproc.Served:
    port = free_loopback_port()
    env = subproc.child_env(pythonpath)
    return subproc.serve_and_probe([sys.executable, "-c", SERVER, str(port), level],
                                   f"http://127.0.0.1:{port}/", timeout_s=20, env=env)


def sglang_keeps_level(tmp_path) -> dict[str, str]:
    (tmp_path / "config.json").write_text(json.dumps(TINY_QWEN3))
    done = run_sglang(SGLANG_PARSE, [str(tmp_path)], timeout_s=180)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, f"sglang ServerArgs did not run ({done.why()}):\n{done.tail()}"
    return json.loads(line.removeprefix("RESULT "))


def reproduce_current(folder: Path) -> Reproduction:
    """The installed SGLang and uvicorn: ServerArgs keeps 'WARN', uvicorn dies of it, and 'warning' serves."""
    sglang, bad, good = subproc.concurrently(lambda: sglang_keeps_level(folder), lambda: serve("WARN"),
                                             lambda: serve("warning"))
    rejected = bad.exited_early and "KeyError: 'warn'" in bad.output.stderr
    evidence = (f"SGLang ServerArgs.log_level={sglang['server_args']!r}; uvicorn log_level='WARN': "
                f"{'KeyError before bind' if rejected else 'no KeyError'} ({bad.output.why()}); "
                f"'warning': {'served 200' if good.answered else 'did not serve'}")
    return Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID),
                        reproduced=rejected and sglang["server_args"] == "WARN", fix_verified=good.answered,
                        evidence=evidence, details=bad.output.tail())


def reproduce_older() -> Reproduction | Verdict:
    """uvicorn 0.44 (side directory) dies of 'WARNING' and serves 'warning'; UNKNOWN without that directory."""
    side = sidecar.path("uvicorn-0.44")
    if side is None:
        return Verdict(check_id="x", status=Status.UNKNOWN, summary=sidecar.missing("uvicorn-0.44"))
    upper, lower = subproc.concurrently(lambda: serve("WARNING", (str(side),)), lambda: serve("warning", (str(side),)))
    rejected = upper.exited_early and "KeyError: 'WARNING'" in upper.output.stderr
    return Reproduction(failure_id=FAILURE_ID, versions={"uvicorn": "0.44.0"}, reproduced=rejected,
                        fix_verified=lower.answered, details=upper.output.tail(),
                        evidence=f"uvicorn 0.44.0 log_level='WARNING': {upper.output.why()}, "
                                 f"'warning': {'served 200' if lower.answered else 'did not serve'}")


def test_repro_uvicorn_log_level(record_result, request):
    record_result(start_ahead(request.session).take(request.node.name))


def test_repro_uvicorn_log_level_older_uvicorn(record_result, request):
    record_result(start_ahead(request.session).take(request.node.name))


SLIME_WAIT = Path(__file__).with_name("slime_wait_replay.py")


def slime_wait(level: str, timeout_s: float) -> subproc.Completed:
    """SLIME's health wait (replayed: see slime_wait_replay.py) on a real uvicorn server given this log level."""
    return subproc.run([sys.executable, str(SLIME_WAIT), str(free_loopback_port()), level], timeout_s=timeout_s,
                       env=subproc.child_env(()))


def rlcheck_wait() -> tuple[WaitResult, float]:
    """rlcheck's bounded wait (3 s) on a server whose uvicorn died of 'WARN' while its process lives on."""
    port = free_loopback_port()
    server = subproc.start([sys.executable, "-c", SERVER_KEPT_ALIVE, str(port), "WARN"])
    try:
        started = time.monotonic()
        bounded = wait_http_ok(f"http://127.0.0.1:{port}/health_generate", timeout_s=3,
                               alive=lambda: server.poll() is None)
        return bounded, time.monotonic() - started
    finally:
        subproc.kill_group(server)


UNBOUNDED = "test_repro_uvicorn_log_level_unbounded_wait"
WAITS = {"control": ("warning", 60.0), "forever": ("WARN", 15.0)}
"""SLIME's replayed wait per role: (uvicorn log level, how long it may run): the control returns once the server
answers, so "still waiting" at the other's deadline is not by design."""
BOUNDED = "bounded"
"""rlcheck's own bounded wait (rlcheck_wait), the third run of the test."""
CURRENT, OLDER = "test_repro_uvicorn_log_level", "test_repro_uvicorn_log_level_older_uvicorn"
Run = subproc.Completed | tuple[WaitResult, float] | Reproduction | Verdict
runs_key = pytest.StashKey[Ahead[Run]]()


def start_ahead(session: pytest.Session) -> Ahead[Run]:
    """This module's runs, begun ahead of the tests (rlcheck.repro.ahead, reproducers/conftest.py) when their test
    runs in this session: the two replayed waits and rlcheck's bounded one (the 15 s the replay spends polling a dead
    server and rlcheck's 3 s pass beside the tests before it, not after them at the end of the run), and the other two
    tests' whole runs (uvicorn servers, SGLang's parser forked from its warm interpreter)."""
    def make() -> Ahead[Run]:
        folder = session.config._tmp_path_factory.mktemp("uvicorn-log-level")  # the tmp_path_factory fixture's own
        calls: dict[str, Callable[[], Run]] = {
            role: (lambda level=level, timeout_s=timeout_s: slime_wait(level, timeout_s=timeout_s))
            for role, (level, timeout_s) in WAITS.items()}
        return Ahead({**calls, BOUNDED: rlcheck_wait, CURRENT: lambda: reproduce_current(folder),
                      OLDER: reproduce_older})

    return begin(session, __file__, runs_key, make,
                 reads={UNBOUNDED: [*WAITS, BOUNDED], CURRENT: [CURRENT], OLDER: [OLDER]})


def test_repro_uvicorn_log_level_unbounded_wait(record_reproduction, request):
    waits = start_ahead(request.session).start([*WAITS, BOUNDED], urgent=True)  # begun ahead, or now
    ours, control, forever = waits.take(BOUNDED), waits.take("control"), waits.take("forever")
    assert isinstance(ours, tuple) and isinstance(control, subproc.Completed) and isinstance(forever, subproc.Completed)
    bounded, bounded_s = ours
    crashed = "KeyError: 'warn'" in forever.stderr
    returned = "SLIME health wait returned" in control.stdout
    hung = returned and crashed and forever.timed_out and "terminated unexpectedly" not in forever.stderr
    ended = not bounded.ok and bounded_s < 3 + 2
    evidence = (f"SLIME v0.2.4's health wait (a replay: SLIME is not importable here): with uvicorn log_level "
                f"'warning' it {'returned' if returned else 'did not return: ' + control.why()}; with 'WARN' uvicorn "
                f"{'raised KeyError before binding' if crashed else 'did not raise KeyError'} and the wait was "
                f"{'still polling at its 15 s deadline' if forever.timed_out else 'over: ' + forever.why()}; "
                f"rlcheck's wait ended in {bounded_s:.1f} s: {bounded.last_error}")
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=hung,
                          fix_verified=ended, evidence=evidence, details=forever.tail())
    record_reproduction(result)
