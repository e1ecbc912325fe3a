"""megatron-training-missing: megatron-core wheels before 0.17 ship no megatron.training.

Proves, with the real wheels: megatron-core 0.16.1 (side directory megatron-core-0.16) imports
megatron.core on CPU but cannot provide SLIME's `megatron.training.arguments.validate_args`
(ModuleNotFoundError); the installed megatron-core (0.19.2, a release >= 0.17) parses and validates
a two-layer model with it in a child process. megatron is a namespace package, so the 0.16.1 child
runs on a mirror of site-packages without the installed megatron (rlcheck.repro.site_mirror); otherwise it
would borrow 0.19.2's megatron.training. It runs in the GPU-less driver environment, forked from the warm interpreter
that imported numpy and torch (megatron_args.TORCH_PRELOAD) and never Megatron, with the import path of a cold child
on that mirror.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck.catalog import installed_versions
from rlcheck.process import subproc
from rlcheck.repro import megatron_args, sidecar, site_mirror
from rlcheck.repro.ahead import Ahead, begin_one
from rlcheck.repro.reproduce import Reproduction
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "megatron-training-missing"
SIDE = "megatron-core-0.16"
IMPORTS = """
from importlib import metadata
print("RESULT megatron-core", metadata.version("megatron-core"), flush=True)
import megatron.core
print("RESULT megatron.core imported", flush=True)
from megatron.training.arguments import validate_args
"""


def import_validate_args_from(side: str, tmp_path) -> tuple[str | None, subproc.Completed]:
    """Import validate_args in a child that sees the side directory's megatron-core only."""
    done = site_mirror.python(IMPORTS, ["megatron", "megatron_core"], tmp_path / "site-without-megatron",
                              base=megatron_args.driver_env(), preload=megatron_args.TORCH_PRELOAD, pythonpath=[side],
                              runtime=megatron_args.RUNTIME, timeout_s=120)
    version = next((x.split()[-1] for x in done.stdout.splitlines() if x.startswith("RESULT megatron-core ")), None)
    return version, done


def reproduce(tmp_path: Path) -> Reproduction | Verdict:
    side = sidecar.path(SIDE)
    if side is None:
        return Verdict(check_id="x", status=Status.UNKNOWN, summary=sidecar.missing(SIDE))
    (old_version, old), current = subproc.concurrently(
        lambda: import_validate_args_from(str(side), tmp_path),
        lambda: megatron_args.run_validate_args(megatron_args.tiny_dense_argv(), world_size=1))
    missing = "megatron.core imported" in old.stdout and "No module named 'megatron.training'" in old.stderr
    installed = installed_versions(["megatron-core"])["megatron-core"]
    error = megatron_args.error_line(old.stderr) or old.why()
    evidence = (f"megatron-core {old_version}: megatron.core imports, validate_args does not: {error}; "
                f"megatron-core {installed} (>= 0.17 ships megatron.training): {current.outcome()}")
    return Reproduction(failure_id=FAILURE_ID, versions={"megatron-core": old_version}, reproduced=missing,
                        fix_verified=current.ok, evidence=evidence,
                        details=f"{old.tail()}\n--- megatron-core {installed} ---\n{current.output.tail(4)}")


def start_ahead(session: pytest.Session) -> Ahead[Reproduction | Verdict]:
    """Begun ahead of the test (rlcheck.repro.ahead, reproducers/conftest.py), in a CPU slot: two forked children."""
    return begin_one(session, __file__, reproduce, heavy=True)


def test_repro_megatron_training_missing(record_result, ahead_result):
    record_result(ahead_result)
