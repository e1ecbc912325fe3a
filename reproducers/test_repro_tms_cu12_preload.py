"""tms-cu12-preload: the preload library chosen by file name is a CUDA 12 build; on CUDA 13 it cannot load.

Proves, with the real torch_memory_saver 0.0.10 wheel: SLIME v0.2.4's rule (the fixed name
torch_memory_saver_hook_mode_preload.abi3.so) picks a file whose NEEDED entries include
libcudart.so.12; loading it in a fresh process on this CUDA 13 runtime fails with
`libcudart.so.12: cannot open shared object file`. The package's own CUDA-aware resolver picks the
_cu13 file, which loads. The NVIDIA driver is absent here: a stub libcuda.so.1 built by the test with
the C compiler stands in for it (tests/cuda_stub.py), so only libcudart decides.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck.probes.node import tms
from rlcheck.repro.ahead import Ahead, begin_one
from rlcheck.repro.reproduce import Reproduction, versions_for
from rlcheck.verdict import Status, Verdict
from tests import cuda_stub

FAILURE_ID = "tms-cu12-preload"


def reproduce(tmp_path: Path) -> Reproduction | Verdict:
    folder, cache = tms.package_dir(), tms.ldconfig_dirs()
    assert folder is not None, "torch_memory_saver is not installed in this environment"
    has_cu12 = tms.find_on_loader_path("libcudart.so.12", "", cache)
    if has_cu12:
        return Verdict(check_id="x", status=Status.UNKNOWN,
                       summary=f"needs a CUDA 13-only runtime: found libcudart.so.12 at {has_cu12}")
    cu13 = tms.find_on_loader_path("libcudart.so.13", "", cache) or str(folder / "nvidia/cu13/lib/libcudart.so.13")
    ld_path = f"{cuda_stub.build(tmp_path)}:{cu13.rsplit('/', 1)[0]}"
    by_name, resolved = tms.choose("slime-v0.2.4", folder), tms.resolved_once()
    assert by_name is not None and resolved.path is not None, resolved.error
    bad, good = tms.load_in_child(by_name, ld_path), tms.load_in_child(resolved.path, ld_path)
    error = next((x for x in bad.stderr.splitlines() if "libcudart.so.12" in x), bad.tail(1))
    reproduced = tms.cudart_major(by_name) == 12 and "libcudart.so.12: cannot open shared object file" in error
    fixed = tms.cudart_major(resolved.path) == 13 and "RLCHECK_LOADED" in good.stdout
    evidence = (f"torch CUDA {resolved.torch_cuda}; by name: {by_name.name} NEEDED libcudart.so."
                f"{tms.cudart_major(by_name)} -> {error.strip()}; resolver: {resolved.path.name} "
                f"{'loads' if fixed else 'does not load: ' + good.tail(1)}")
    return Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=reproduced,
                        fix_verified=fixed, evidence=evidence)


def start_ahead(session: pytest.Session) -> Ahead[Reproduction | Verdict]:
    """Begun ahead of the test (rlcheck.repro.ahead, reproducers/conftest.py), in a CPU slot: the loader children."""
    return begin_one(session, __file__, reproduce, heavy=True)


def test_repro_tms_cu12_preload(record_result, ahead_result):
    record_result(ahead_result)
