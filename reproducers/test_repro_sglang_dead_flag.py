"""sglang-dead-flag: a --sglang-* flag the installed SGLang no longer has is dropped without a word.

Proves, with real material only: the installed SGLang 0.5.12.post1's own parser rejects `--enable-ep-moe` (strict
argparse exits with `unrecognized arguments`); SLIME v0.2.4's parse, as recorded in the committed schema
(rlcheck/data/frameworks/slime-v0.2.4.json: its own add_argument calls plus SGLang's options under --sglang-, both
parsers parse_known_args) and judged by rlcheck.framework.argv, has no such option and drops it while reading the
recipe's other flags. The fix: the replacement rlcheck recommends goes through SGLang's real parser (it must set
ep_size) and through the same SLIME schema (no finding).
"""

from __future__ import annotations

import json
import re

from rlcheck.framework import argv as framework_argv
from rlcheck.framework.schema import load
from rlcheck.probes.recipe.sglang_flags import ask_sglang_options, evaluate_sglang_flags, run_sglang
from rlcheck.repro.reproduce import Reproduction, versions_for
from rlcheck.verdict import Status

FAILURE_ID = "sglang-dead-flag"
SCHEMA = "slime-v0.2.4"
RECIPE_FLAGS = ["--sglang-mem-fraction-static", "0.85", "--sglang-enable-ep-moe", "--sglang-log-level", "warning"]
EP_SIZE = "2"
# SGLang's own parser, strict, as `python -m sglang.launch_server` runs it; prints each argv's error or namespace.
PARSE = """
import argparse, contextlib, io, json, sys
from sglang.srt.server_args import ServerArgs
out = []
for argv in json.loads(sys.argv[1]):
    parser = argparse.ArgumentParser(prog="launch_server.py")
    ServerArgs.add_cli_args(parser)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            ns = vars(parser.parse_args(argv))
            out.append({"error": "", "set": {k: v for k, v in ns.items() if isinstance(v, (int, float, str))}})
        except SystemExit:
            out.append({"error": err.getvalue().strip().splitlines()[-1]})
print("RESULT " + json.dumps(out))
"""


def sglang_parse(*argvs: list[str]) -> list[dict]:
    done = run_sglang(PARSE, [json.dumps(argvs)], timeout_s=180)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, f"sglang's parser did not run ({done.why()}):\n{done.tail()}"
    return json.loads(line.removeprefix("RESULT "))


def replacement(details: str) -> list[str]:
    """The flag rlcheck's advice names for --sglang-enable-ep-moe, with N filled in: [] when it names none."""
    found = re.search(r"--sglang-enable-ep-moe: (--sglang-[a-z-]+) N", details)
    return [found.group(1), EP_SIZE] if found else []


def test_repro_sglang_dead_flag(record_reproduction):
    schema = load(SCHEMA)
    findings, _, read = framework_argv.judge(RECIPE_FLAGS, schema)
    dropped = [f.flag for f in findings if f.problem == "unknown"]
    lenient = all(p.lenient for p in schema.parsers)
    check = evaluate_sglang_flags(RECIPE_FLAGS, ask_sglang_options())
    fix = replacement(check.details)
    fixed_argv = [t for t in RECIPE_FLAGS if t != "--sglang-enable-ep-moe"] + fix
    strict_old, strict_new = sglang_parse(["--model-path", "m", "--enable-ep-moe"],
                                          ["--model-path", "m", *(t.replace("--sglang-", "--", 1) for t in fix)])
    fixed_findings, _, _ = framework_argv.judge(fixed_argv, schema)
    dest = schema.by_flag[fix[0]].dest.removeprefix("sglang_") if fix and fix[0] in schema.by_flag else "?"
    ep_size = strict_new.get("set", {}).get(dest)
    reproduced = ("unrecognized arguments: --enable-ep-moe" in strict_old["error"] and lenient
                  and dropped == ["--sglang-enable-ep-moe"] and len(findings) == 1)
    fix_verified = (check.status is Status.FAIL and bool(fix) and not strict_new["error"]
                    and str(ep_size) == EP_SIZE and not fixed_findings)
    evidence = (f"SGLang's parser: {strict_old['error']!r}; SLIME {schema.version} schema (parse_known_args) read "
                f"{read} option(s), dropped {dropped}; rlcheck: {check.summary}; replacement {' '.join(fix) or 'none'}"
                f": SGLang's parser {strict_new.get('error') or f'{dest}={ep_size}'}, "
                f"SLIME schema findings {[f.text for f in fixed_findings]}")
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=reproduced,
                          fix_verified=fix_verified, evidence=evidence, details=check.details)
    record_reproduction(result)
