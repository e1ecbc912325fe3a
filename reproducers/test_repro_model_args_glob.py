"""model-args-glob: an unquoted `--moe-layer-freq [1,1,1]` is rewritten by the shell's pathname expansion.

Proves through a real Ray job on loopback: a job whose inner bash expands ${MODEL_ARGS[@]} unquoted,
in a working directory holding a file named `1` (Qwen3-30B-A3B) or `03+175` (GLM-5.2), hands train.py
the file name instead of the pattern; real Megatron's parser then rejects the GLM-5.2 value
(`invalid moe_freq_type value`). Quoting each token survives, and so does rlcheck.cluster.launch.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from rlcheck.cluster import launch
from rlcheck.plugin.resources import early_ray_jobs, has_early_ray
from rlcheck.process import subproc
from rlcheck.repro import megatron_args
from rlcheck.repro.ahead import Ahead, begin
from rlcheck.repro.reproduce import Reproduction, versions_for
from tests import argv_probe

FAILURE_ID = "model-args-glob"
CASES = {"qwen3-30b-a3b": ("[1,1,1,1]", "1"), "glm5.2": ("[0]*3+[1]*75", "03+175")}
MEGATRON_PARSE = """
import sys
sys.argv = ["train.py", *sys.argv[1:]]
from megatron.training.arguments import parse_args
args = parse_args(ignore_unknown_args=True)
print("MOE_LAYER_FREQ", len(args.moe_layer_freq) if isinstance(args.moe_layer_freq, list) else args.moe_layer_freq)
"""


def job_script(folder: Path, pattern: str, *, quoted: bool) -> str:
    """What the job's inner bash runs: source the model file, expand the array (quoted or not)."""
    argv_probe.write_model_file(folder, ["--moe-layer-freq", pattern, "--num-experts", "128"])
    printer = argv_probe.write_printer(folder)
    expansion = '"${MODEL_ARGS[@]}"' if quoted else "${MODEL_ARGS[@]}"
    return f"cd {shlex.quote(str(folder))} && source model.sh && {sys.executable} {printer} {expansion}"


NEXT_CASE = "RLCHECK_NEXT_CASE"
"""The line a job prints between the cases it runs, one after the other."""


def run_cases(dashboard_url: str, entrypoints: list[str]) -> list[list[str] | None]:
    """One Ray job running each entrypoint in turn (the next one runs whatever the last one did): the argv each
    entrypoint's program printed, None where it never ran. One job per kind, not per case: each job is a Ray worker
    of its own (its supervisor), a second of CPU."""
    outcome = launch.wait_job(dashboard_url, launch.submit_entrypoint(dashboard_url, f"; echo {NEXT_CASE}; ".join(
        entrypoints)), timeout_s=120)
    parts: list[list[str]] = [[]]
    for line in outcome.logs.splitlines():
        if line.strip() == NEXT_CASE:  # the echo itself; Ray's "Running entrypoint" line holds more than this
            parts.append([])
        else:
            parts[-1].append(line)
    return [argv_probe.printed_argv("\n".join(part)) for part in parts[:len(entrypoints)]] + \
        [None] * (len(entrypoints) - len(parts))


def megatron_reads(argv: list[str]) -> str:
    done = megatron_args.run_python(MEGATRON_PARSE, argv, env={"WORLD_SIZE": "1", "RANK": "0"})
    out = done.stdout + done.stderr
    error = next((x for x in out.splitlines() if "error: argument --moe-layer-freq" in x), None)
    return error or next((x for x in out.splitlines() if x.startswith("MOE_LAYER_FREQ")), done.tail(3))


KINDS = ("unquoted", "quoted", "rlcheck.cluster.launch")


def entrypoints(folder: Path, pattern: str, decoy: str) -> dict[str, str]:
    """A case's folder (with its decoy file) and the job entrypoint of each kind: the array unquoted, quoted, and
    rlcheck.cluster.launch's."""
    folder.mkdir()
    (folder / decoy).write_text("")
    return {"unquoted": launch.entrypoint(["bash", "-c", job_script(folder, pattern, quoted=False)]),
            "quoted": launch.entrypoint(["bash", "-c", job_script(folder, pattern, quoted=True)]),
            "rlcheck.cluster.launch": launch.entrypoint([sys.executable, str(folder / "print_argv.py"),
                                                         "--moe-layer-freq", pattern, "--num-experts", "128"])}


def reproduce(dashboard_url: str, folder: Path) -> Reproduction:
    made = {name: entrypoints(folder / name, *case) for name, case in CASES.items()}
    names = list(CASES)
    per_kind = subproc.concurrently(*(lambda k=k: run_cases(dashboard_url, [made[n][k] for n in names])
                                      for k in KINDS))  # three jobs, each running both cases
    seen: dict[str, dict[str, object]] = {n: {"pattern": CASES[n][0]} for n in names}
    for kind, got in zip(KINDS, per_kind, strict=True):
        for name, argv in zip(names, got, strict=True):
            seen[name][kind] = argv
    globbed = all(r["unquoted"] and r["unquoted"][1] == CASES[n][1] for n, r in seen.items())
    intact = all(r[k] and r[k][1] == r["pattern"] for r in seen.values() for k in ("quoted", "rlcheck.cluster.launch"))
    megatron = megatron_reads(list(seen["glm5.2"]["unquoted"] or []))
    evidence = "; ".join(f"{n}: {r['pattern']} -> {json.dumps((r['unquoted'] or ['?', '?'])[1])} unquoted, "
                         f"kept when quoted" for n, r in seen.items()) + f"; Megatron on the GLM-5.2 argv: {megatron}"
    return Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID),
                        reproduced=globbed and "invalid moe_freq_type value" in megatron, fix_verified=intact,
                        evidence=evidence)


runs_key = pytest.StashKey[Ahead[Reproduction]]()
TEST = "test_repro_model_args_glob"


def start_ahead(session: pytest.Session) -> Ahead[Reproduction]:
    """The jobs on the session's Ray, begun ahead of the test (rlcheck.repro.ahead, reproducers/conftest.py) where
    that Ray started at collection; else the test runs them on local_ray."""
    def make() -> Ahead[Reproduction]:
        if not has_early_ray(session.config):
            return Ahead({})
        folder = session.config._tmp_path_factory.mktemp("model-args-glob")  # the tmp_path_factory fixture's own
        return Ahead({TEST: lambda: reproduce(early_ray_jobs(session.config).dashboard_url, folder)})

    return begin(session, __file__, runs_key, make)


@pytest.mark.slow
def test_repro_model_args_glob(record_reproduction, local_ray, tmp_path, request):
    runs = start_ahead(request.session)
    record_reproduction(runs.take(TEST) if TEST in runs.calls else reproduce(local_ray.dashboard_url, tmp_path))
