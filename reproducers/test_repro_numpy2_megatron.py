"""numpy2-megatron: numpy 2 breaks Megatron's checkpoint save in megatron-core releases before 0.16.

What breaks, found with the real packages: dist_checkpointing.save first runs save_preprocess, whose
sharding validation calls np.product for flattened ShardedTensors, the layout the distributed
optimizer saves before 0.16 (fully_sharded_model_space, which SLIME's use_distributed_optimizer +
dist_ckpt_save_pre_mcore_014 select). numpy 2 removed np.product, so the first checkpoint save dies
with AttributeError (Megatron-LM#1563; np.prod from 0.16.0; 0.13-0.15 declare numpy<2, which
sglang's numpy 2 overrides).

Proves, in GPU-less child processes: megatron-core 0.15.3 (side directory) under numpy 2.5.5 (side
directory) fails save_preprocess with that error, and passes under numpy 1.26 (the pin, the fix).
megatron-core 0.16.1 and the installed 0.19.2 pass it under numpy 2.5.5 (their layout, not
flattened), so at those releases numpy 2 has no known Megatron failure (import, helpers_cpp and
validate_args also work: reference feasibility.md 5); the catalogue range is numpy >=2.0 with
megatron-core <0.16.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlcheck.catalog import get
from rlcheck.process import subproc, warm
from rlcheck.process.wait import free_loopback_port
from rlcheck.repro import megatron_args, sidecar
from rlcheck.repro.ahead import Ahead, begin
from rlcheck.repro.reproduce import Reproduction
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "numpy2-megatron"
SAVE_PREPROCESS = """
import numpy as np, torch
import torch.distributed as dist
from importlib import metadata
dist.init_process_group("gloo", rank=0, world_size=1)
import megatron.core
from megatron.core.dist_checkpointing import ShardedObject, ShardedTensor
from megatron.core.dist_checkpointing.state_dict_utils import save_preprocess
print("RESULT versions", np.__version__, metadata.version("megatron-core"), flush=True)
rng = ShardedObject("rng_state", {"np_rng_state": np.random.get_state()}, (1,), (0,), replica_id=0)
if hasattr(ShardedTensor, "from_rank_offsets_flat"):  # before 0.16: flat slices of each parameter
    exp_avg = ShardedTensor.from_rank_offsets_flat("optimizer.state.exp_avg.w", torch.zeros(16), (4, 4),
                                                   flattened_range=slice(0, 16))
else:
    exp_avg = ShardedTensor.from_rank_offsets("optimizer.state.exp_avg.w", torch.zeros(4, 4))
try:
    save_preprocess({"optimizer": exp_avg, "rng_state": rng}, validate_access_integrity=True)
    print("RESULT save_preprocess completed")
finally:
    dist.destroy_process_group()
"""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Saved:
    versions: dict[str, str | None]
    completed: bool
    error: str
    output: subproc.Completed

    def reproduced(self) -> bool:
        return not self.completed and any(p.search(self.error) for p in get(FAILURE_ID).patterns)

    def outcome(self) -> str:
        where = f"numpy {self.versions['numpy']}, megatron-core {self.versions['megatron-core']}"
        return f"{where}: {'save_preprocess completed' if self.completed else self.error or self.output.why()}"


RUN_ENV = ("TORCH_CUDA_ARCH_LIST", "TORCH_EXTENSIONS_DIR", "MASTER_ADDR", "MASTER_PORT")
"""Read only when a run builds its extension or joins its process group: they may differ between runs."""


def save_preprocess(side_dirs: list[str], tmp_path, name: str) -> Saved:
    # megatron-core 0.15 JIT-builds a CUDA allocator at import: name an arch so torch can try (and, with
    # no GPU, fail and fall back) instead of raising IndexError; a fresh build folder per run.
    env = {"TORCH_CUDA_ARCH_LIST": "9.0", "TORCH_EXTENSIONS_DIR": str(tmp_path / f"torch-extensions-{name}"),
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_loopback_port())}
    # In the GPU-less driver environment, forked from a warm numpy + torch interpreter (megatron_args.TORCH_PRELOAD;
    # numpy 2 is imported before torch, so the numpy-2 runs share one with numpy-2 on its PYTHONPATH); the Megatron
    # side directory goes first on sys.path, after '' as PYTHONPATH puts it.
    *first, last = side_dirs
    served, inserted = ([last], first) if Path(last).name == "numpy-2" else ([], side_dirs)
    code = f"import sys\nsys.path[1:1] = {inserted!r}\n{SAVE_PREPROCESS}"
    done = warm.python(code, preload=megatron_args.TORCH_PRELOAD, env=megatron_args.driver_env(served) | env,
                       runtime=RUN_ENV, timeout_s=300)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT versions ")), "")
    numpy, megatron = (line.split()[2:4] if line else (None, None))
    completed = "RESULT save_preprocess completed" in done.stdout
    return Saved(versions={"numpy": numpy, "megatron-core": megatron}, completed=completed,
                 error="" if completed else megatron_args.error_line(done.stderr), output=done)


def side_dirs(*names: str) -> list[str] | Verdict:
    found = [sidecar.path(n) for n in names]
    missing = [n for n, p in zip(names, found, strict=True) if p is None]
    if missing:
        return Verdict(check_id="x", status=Status.UNKNOWN, summary=sidecar.missing(missing[0]))
    return [str(p) for p in found]


def could_not_run(run: Saved) -> Verdict | None:
    """UNKNOWN when the child died of something other than this failure: no verdict either way."""
    if run.completed or run.reproduced():
        return None
    return Verdict(check_id="x", status=Status.UNKNOWN, failure_id=FAILURE_ID, details=run.output.tail(),
                   summary=f"save_preprocess could not run ({run.output.why()}): {run.outcome()}")


RUNS = {"numpy-2": ("megatron-core-0.15", "numpy-2"), "numpy-1": ("megatron-core-0.15",),
        "installed": ("numpy-2",), "megatron-core-0.16": ("megatron-core-0.16", "numpy-2")}
"""Each child's side directories (the installed packages under them)."""
READS = {"test_repro_numpy2_megatron": ("numpy-2", "numpy-1"),
         "test_repro_numpy2_megatron_fixed_release[installed]": ("installed",),
         "test_repro_numpy2_megatron_fixed_release[megatron-core-0.16]": ("megatron-core-0.16",)}
"""The children each test reads."""


saves_key = pytest.StashKey[Ahead[Saved]]()


def start_ahead(session: pytest.Session) -> Ahead[Saved]:
    """The children of this module's tests in this session, made once and begun together ahead of the tests
    (rlcheck.repro.ahead, reproducers/conftest.py), each holding a CPU slot; else by the first of these tests."""
    def make() -> Ahead[Saved]:
        folder = session.config._tmp_path_factory.mktemp("numpy2-megatron")  # the tmp_path_factory fixture's own
        found = {key: dirs for key, names in RUNS.items() if not isinstance(dirs := side_dirs(*names), Verdict)}
        return Ahead({key: (lambda key=key, dirs=dirs: save_preprocess(dirs, folder, key))
                      for key, dirs in found.items()}, heavy=True)

    return begin(session, __file__, saves_key, make, reads=READS)


@pytest.fixture
def saves(request: pytest.FixtureRequest) -> Ahead[Saved]:
    return start_ahead(request.session)


def test_repro_numpy2_megatron(record_verdict, record_reproduction, saves):
    dirs = side_dirs("megatron-core-0.15", "numpy-2")
    if isinstance(dirs, Verdict):
        record_verdict(dirs)
        return
    saves.start(READS["test_repro_numpy2_megatron"], urgent=True)
    broken, pinned = saves.take("numpy-2"), saves.take("numpy-1")
    if (unknown := could_not_run(broken)) is not None:
        record_verdict(unknown)
        return
    evidence = (f"dist_checkpointing save_preprocess of a distributed-optimizer flat shard, {broken.outcome()}; "
                f"pinned {pinned.outcome()}")
    result = Reproduction(failure_id=FAILURE_ID, versions=broken.versions, reproduced=broken.reproduced(),
                          fix_verified=pinned.completed, evidence=evidence, details=broken.output.tail())
    record_reproduction(result)


@pytest.mark.parametrize("megatron_side", [None, "megatron-core-0.16"], ids=["installed", "megatron-core-0.16"])
def test_repro_numpy2_megatron_fixed_release(record_verdict, record_reproduction, saves, megatron_side):
    dirs = side_dirs(*filter(None, (megatron_side, "numpy-2")))
    if isinstance(dirs, Verdict):
        record_verdict(dirs)
        return
    run = saves.take(megatron_side or "installed")
    if (unknown := could_not_run(run)) is not None:
        record_verdict(unknown)
        return
    result = Reproduction(failure_id=FAILURE_ID, versions=run.versions, reproduced=run.reproduced(),
                          fix_verified=False, details=run.output.tail(),
                          evidence=f"dist_checkpointing save_preprocess, {run.outcome()}")
    record_reproduction(result)
