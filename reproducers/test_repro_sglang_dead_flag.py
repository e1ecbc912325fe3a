"""sglang-dead-flag: a --sglang-* flag the installed SGLang no longer has is dropped without a word.

Proves, with the real SGLang 0.5.12.post1 parser: `--enable-ep-moe` is unknown to ServerArgs (strict
argparse exits with `unrecognized arguments`); SLIME's way of parsing (every ServerArgs option
re-registered as --sglang-*, then parse_known_args) accepts `--sglang-enable-ep-moe` and configures
nothing; rlcheck's strict check names the flag and its replacement.
"""

from __future__ import annotations

import json
import sys

from rlcheck.probes.sglang_flags import collect_sglang_options, evaluate_sglang_flags
from rlcheck.process import subproc
from rlcheck.repro.reproduce import Reproduction, versions_for
from rlcheck.verdict import Status

FAILURE_ID = "sglang-dead-flag"
RECIPE_FLAGS = ["--sglang-mem-fraction-static", "0.85", "--sglang-enable-ep-moe", "--sglang-log-level", "warning"]
PARSE = """
import argparse, contextlib, io, json, sys
from sglang.srt.server_args import ServerArgs
strict = argparse.ArgumentParser(prog="launch_server.py")
ServerArgs.add_cli_args(strict)
err = io.StringIO()
with contextlib.redirect_stderr(err):
    try:
        strict.parse_args(["--model-path", "m", "--enable-ep-moe"])
        strict_error = ""
    except SystemExit:
        strict_error = err.getvalue().strip().splitlines()[-1]
lenient = argparse.ArgumentParser()
add = lenient.add_argument
SKIPPED = {"model_path", "config", "trust_remote_code", "random_seed", "enable_memory_saver", "tp_size", "port",
           "nnodes", "node_rank", "dist_init_addr", "gpu_id_step", "base_gpu_id", "nccl_port", "skip_server_warmup",
           "enable_return_routed_experts"}
def prefixed(*names, **kw):  # how SLIME registers SGLang's options: --foo becomes --sglang-foo, some skipped
    long = [n for n in names if n.startswith("--")]
    if kw.get("dest", long[0][2:].replace("-", "_")) in SKIPPED:
        return None
    names = [n.replace("--", "--sglang-", 1) for n in long]
    if "dest" in kw:
        kw["dest"] = "sglang_" + kw["dest"]
    return add(*names, **kw)
lenient.add_argument = prefixed
ServerArgs.add_cli_args(lenient)
ns, unknown = lenient.parse_known_args(sys.argv[1:])
print("RESULT " + json.dumps({"strict_error": strict_error, "unknown": unknown,
                              "mem_fraction": ns.sglang_mem_fraction_static,
                              "ep_fields": sorted(k for k in vars(ns) if "ep_moe" in k)}))
"""


def slime_style_parse() -> dict:
    done = subproc.run([sys.executable, "-c", PARSE, *RECIPE_FLAGS], timeout_s=180,
                       env=subproc.child_env() | {"HF_HUB_OFFLINE": "1"})
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, f"sglang's parser did not run ({done.why()}):\n{done.tail()}"
    return json.loads(line.removeprefix("RESULT "))


def test_repro_sglang_dead_flag(record_reproduction):
    seen = slime_style_parse()
    check = evaluate_sglang_flags(RECIPE_FLAGS, collect_sglang_options())
    dropped = seen["unknown"] == ["--sglang-enable-ep-moe"] and not seen["ep_fields"]
    reproduced = "unrecognized arguments: --enable-ep-moe" in seen["strict_error"] and dropped
    caught = check.status is Status.FAIL and "--sglang-enable-ep-moe" in check.summary and "ep-size" in check.details
    evidence = (f"strict: {seen['strict_error']!r}; SLIME-style parse_known_args: no error, "
                f"mem_fraction_static={seen['mem_fraction']}, dropped {seen['unknown']}; rlcheck: {check.summary}")
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=reproduced,
                          fix_verified=caught, evidence=evidence, details=check.details)
    record_reproduction(result)
