"""Every --sglang-* flag of a recipe exists in the installed SGLang (catalogue: sglang-dead-flag).

SLIME parses --sglang-* leniently (parse_known_args), so a flag SGLang removed is dropped without a
word. The collector asks the installed SGLang's own argument parser (in a child process: importing
sglang is slow and heavy, so the child is forked from a warm interpreter that imported it once, shared with
the reproducers that ask the same parser); the evaluation is strict and names each unknown flag with its replacement.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from pathlib import Path
from typing import Any

import rlcheck.repro.image_facts as image_facts
from rlcheck import catalog
from rlcheck.process import subproc, warm
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "sglang-dead-flag"
# ServerArgs fields SLIME sets itself and does not expose as --sglang-* (slime/backends/sglang_utils/arguments.py).
SLIME_SKIPPED = ("model-path", "config", "trust-remote-code", "random-seed", "enable-memory-saver", "tp-size",
                 "port", "nnodes", "node-rank", "dist-init-addr", "gpu-id-step", "base-gpu-id", "nccl-port",
                 "skip-server-warmup", "enable-return-routed-experts")
# --sglang-* options SLIME adds on its own (router options are --sglang-router-*).
SLIME_OWN = ("server-concurrency", "config")
SLIME_OWN_PREFIXES = ("router-",)
REPLACEMENTS = {
    "enable-ep-moe": "--sglang-ep-size N (SGLang removed --enable-ep-moe; EP is --ep-size / --expert-parallel-size)",
    "enable-deepep-moe": "--sglang-moe-a2a-backend deepep",
}
COLLECT = """
import argparse, json
from importlib import metadata
from sglang.srt.server_args import ServerArgs
parser = argparse.ArgumentParser()
ServerArgs.add_cli_args(parser)
flags = sorted(s[2:] for s in parser._option_string_actions if s.startswith("--"))
print("RLCHECK_SGLANG " + json.dumps({"version": metadata.version("sglang"), "flags": flags}))
"""


SGLANG_PRELOAD = ("sglang.srt.server_args",)
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def sglang_env() -> dict[str, str]:
    """The environment of a child that asks SGLang's parser: this one's, offline (nothing reaches the network)."""
    return subproc.child_env() | OFFLINE


def run_sglang(code: str, argv: list[str] | tuple[str, ...] = (), *, timeout_s: float) -> subproc.Completed:
    """`python -c code argv...` in its own child, forked from the warm interpreter that imported SGLANG_PRELOAD."""
    return warm.python(code, argv, preload=SGLANG_PRELOAD, env=sglang_env(), timeout_s=timeout_s)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class SglangOptions:
    version: str | None
    """Installed sglang version; None when it could not be asked."""
    flags: tuple[str, ...]
    """ServerArgs option names without the leading '--'."""
    error: str = ""
    source: str = ""
    """Where the list came from when it was kept for this image (rlcheck.repro.image_facts), else ''."""


def server_args_files() -> list[Path]:
    """The file SGLang's options are read from (found without importing SGLang): a key term of the kept list."""
    return [root / "srt" / "server_args.py" for root in image_facts.find_package("sglang")[:1]]


def ask_sglang_options(timeout_s: float = 180.0) -> SglangOptions:
    done = run_sglang(COLLECT, timeout_s=timeout_s)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RLCHECK_SGLANG ")), None)
    if line is None:
        return SglangOptions(version=None, flags=(), error=f"sglang's parser did not run ({done.why()}): "
                                                          f"{done.tail(1)}")
    data = json.loads(line.removeprefix("RLCHECK_SGLANG "))
    return SglangOptions(version=data["version"], flags=tuple(data["flags"]))


def collect_sglang_options(timeout_s: float = 180.0) -> SglangOptions:
    """The installed SGLang's options, kept per image: a second preflight of the same image reads the list instead
    of importing SGLang again (rlcheck.repro.image_facts; --no-cache asks it again)."""
    asked: list[SglangOptions] = []

    def ask() -> dict[str, Any] | None:
        asked.append(ask_sglang_options(timeout_s))
        got = asked[0]
        return None if got.version is None else {"version": got.version, "flags": list(got.flags)}

    recalled = image_facts.recall("sglang-options", COLLECT + repr(SGLANG_PRELOAD), server_args_files(), ask)
    if recalled.fact is None:
        return asked[0]
    return SglangOptions(version=str(recalled.fact["version"]), flags=tuple(map(str, recalled.fact["flags"])),
                         source=recalled.note if not asked or recalled.note.startswith("ignored") else "")


def _known(name: str, options: SglangOptions) -> bool:
    if name in SLIME_OWN or name.startswith(SLIME_OWN_PREFIXES):
        return True
    return name in options.flags and name not in SLIME_SKIPPED


def _advice(name: str, options: SglangOptions) -> str:
    if name in REPLACEMENTS:
        return REPLACEMENTS[name]
    if name in SLIME_SKIPPED:  # its own name is the closest match, and SLIME would drop that too
        return "SLIME sets this server argument itself and passes no --sglang- flag for it: drop it"
    passed = [flag for flag in options.flags if flag not in SLIME_SKIPPED]
    close = difflib.get_close_matches(name, passed, n=1)
    return f"did you mean --sglang-{close[0]}?" if close else "drop it"


def evaluate_sglang_flags(argv: list[str] | tuple[str, ...], options: SglangOptions) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    if options.version is None:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"cannot ask the installed SGLang: {options.error}")
    given = [a.split("=", 1)[0][len("--sglang-"):] for a in argv if a.startswith("--sglang-")]
    dead = [name for name in given if not _known(name, options)]
    kept = [f"sglang {options.version}'s option list: {options.source}"] if options.source else []
    if not dead:
        return Verdict(**base, status=Status.PASS, details="\n".join(kept),
                       summary=f"{len(given)} --sglang-* flag(s) all known to sglang {options.version}")
    details = "\n".join([*(f"--sglang-{name}: {_advice(name, options)}" for name in dead), *kept])
    return Verdict(**base, status=Status.FAIL, details=details, remedy=catalog.get(FAILURE_ID).remedy,
                   summary=f"{len(dead)} flag(s) unknown to sglang {options.version}, which SLIME would drop "
                           f"silently: {', '.join('--sglang-' + n for n in dead)}")
