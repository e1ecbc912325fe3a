"""tms-loader-unresolved: the right (_cu13) library, but its libcudart is not on the loader path.

Proves, with the real torch_memory_saver 0.0.10 wheel and the CUDA 13 runtime from pip wheels
(site-packages/nvidia/cu13/lib): the resolver's _cu13 hook library fails to load with
`libcudart.so.13: cannot open shared object file` when the loader cannot see that folder (the
system's ld.so.cache is hidden from the child with `unshare -m` and a bind mount, as in an image whose
CUDA comes only from pip), and loads once the folder is on LD_LIBRARY_PATH. A stub libcuda.so.1
built by the test stands in for the absent driver (tests/cuda_stub.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rlcheck.probes.node import tms
from rlcheck.repro.ahead import Ahead, begin_one
from rlcheck.repro.reproduce import Reproduction, versions_for
from rlcheck.verdict import Status, Verdict
from tests import cuda_stub

FAILURE_ID = "tms-loader-unresolved"
HIDE_LD_CACHE = ("unshare", "-m", "--propagation", "private", "sh", "-c",
                 'mount --bind /dev/null /etc/ld.so.cache && exec "$@"', "sh")


def reproduce(tmp_path: Path) -> Reproduction | Verdict:
    folder = tms.package_dir()
    assert folder is not None, "torch_memory_saver is not installed in this environment"
    pip_cuda = folder / "nvidia" / "cu13" / "lib"
    usable = shutil.which("unshare") and subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0
    if not usable or not (pip_cuda / "libcudart.so.13").exists():
        why = "needs `unshare -m` (root) and the pip CUDA 13 runtime (nvidia/cu13/lib/libcudart.so.13)"
        return Verdict(check_id="x", status=Status.UNKNOWN, summary=f"{why}: not available here")
    resolved = tms.resolved_once()
    assert resolved.path is not None, resolved.error
    stub = str(cuda_stub.build(tmp_path))
    bad = tms.load_in_child(resolved.path, stub, wrapper=HIDE_LD_CACHE)
    good = tms.load_in_child(resolved.path, f"{stub}:{pip_cuda}", wrapper=HIDE_LD_CACHE)
    error = next((x for x in bad.stderr.splitlines() if "libcudart" in x), bad.tail(1))
    reproduced = "RLCHECK_LOADED" not in bad.stdout and "libcudart.so.13: cannot open shared object file" in error
    fixed = "RLCHECK_LOADED" in good.stdout
    evidence = (f"{resolved.path.name} (torch CUDA {resolved.torch_cuda}) without the pip CUDA folder on the "
                f"loader path: {error.strip()}; with LD_LIBRARY_PATH+={pip_cuda}: "
                f"{'loads' if fixed else good.tail(1)}")
    return Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=reproduced,
                        fix_verified=fixed, evidence=evidence)


def start_ahead(session: pytest.Session) -> Ahead[Reproduction | Verdict]:
    """Begun ahead of the test (rlcheck.repro.ahead, reproducers/conftest.py), in a CPU slot: loader children."""
    return begin_one(session, __file__, reproduce, heavy=True)


def test_repro_tms_loader_unresolved(record_result, ahead_result):
    record_result(ahead_result)
