"""uvicorn-log-level: an uppercase log level reaches uvicorn, which dies before binding; the rollout waits forever.

Proves, with the real packages: SGLang 0.5.12.post1's ServerArgs keeps `--log-level WARN` as given;
real uvicorn rejects it (KeyError) before its socket binds, while the lowercase `warning` serves;
uvicorn 0.44 (side directory) also rejects `WARNING`; and a health loop without a deadline never
returns while rlcheck's bounded wait ends within its timeout.
"""

from __future__ import annotations

import json
import sys
import time

from rlcheck.process import subproc
from rlcheck.process.wait import free_loopback_port, wait_http_ok
from rlcheck.repro import sidecar
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
# SLIME's _wait_server_healthy: poll until 200 or the process is gone; no deadline.
UNBOUNDED_WAIT = """
import os, sys, time, urllib.request
url, pid = sys.argv[1], int(sys.argv[2])
while True:
    try:
        urllib.request.urlopen(url, timeout=1)
        break
    except Exception:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    time.sleep(0.2)
print("health wait returned")
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
    env = subproc.child_env(()) | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subproc.run([sys.executable, "-c", SGLANG_PARSE, str(tmp_path)], timeout_s=180, env=env)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, f"sglang ServerArgs did not run ({done.why()}):\n{done.tail()}"
    return json.loads(line.removeprefix("RESULT "))


def test_repro_uvicorn_log_level(record_reproduction, tmp_path):
    sglang = sglang_keeps_level(tmp_path)
    bad, good = serve("WARN"), serve("warning")
    rejected = bad.exited_early and "KeyError: 'warn'" in bad.output.stderr
    evidence = (f"SGLang ServerArgs.log_level={sglang['server_args']!r}; uvicorn log_level='WARN': "
                f"{'KeyError before bind' if rejected else 'no KeyError'} ({bad.output.why()}); "
                f"'warning': {'served 200' if good.answered else 'did not serve'}")
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID),
                          reproduced=rejected and sglang["server_args"] == "WARN", fix_verified=good.answered,
                          evidence=evidence, details=bad.output.tail())
    record_reproduction(result)


def test_repro_uvicorn_log_level_older_uvicorn(record_verdict, record_reproduction):
    side = sidecar.path("uvicorn-0.44")
    if side is None:
        record_verdict(Verdict(check_id="x", status=Status.UNKNOWN, summary=sidecar.missing("uvicorn-0.44")))
        return
    upper, lower = serve("WARNING", (str(side),)), serve("warning", (str(side),))
    rejected = upper.exited_early and "KeyError: 'WARNING'" in upper.output.stderr
    result = Reproduction(failure_id=FAILURE_ID, versions={"uvicorn": "0.44.0"}, reproduced=rejected,
                          fix_verified=lower.answered, details=upper.output.tail(),
                          evidence=f"uvicorn 0.44.0 log_level='WARNING': {upper.output.why()}, "
                                   f"'warning': {'served 200' if lower.answered else 'did not serve'}")
    record_reproduction(result)


def test_repro_uvicorn_log_level_unbounded_wait(record_reproduction):
    port = free_loopback_port()
    url = f"http://127.0.0.1:{port}/health_generate"
    server = subproc.start([sys.executable, "-c", SERVER_KEPT_ALIVE, str(port), "WARN"])
    try:
        forever = subproc.run([sys.executable, "-c", UNBOUNDED_WAIT, url, str(server.pid)], timeout_s=6)
        started = time.monotonic()
        bounded = wait_http_ok(url, timeout_s=3, alive=lambda: server.poll() is None)
        bounded_s = time.monotonic() - started
        alive_at_end = server.poll() is None
    finally:
        subproc.kill_group(server)
    hung = forever.timed_out and alive_at_end
    ended = not bounded.ok and bounded_s < 3 + 2
    evidence = (f"server alive after its HTTP thread died; unbounded /health_generate loop "
                f"{'still waiting at its 6 s deadline' if forever.timed_out else 'returned'}; "
                f"rlcheck wait ended in {bounded_s:.1f} s: {bounded.last_error}")
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=hung,
                          fix_verified=ended, evidence=evidence)
    record_reproduction(result)
