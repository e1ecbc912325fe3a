"""GPU smoke on this machine: bf16 GEMM rate of every GPU, NCCL all-reduce bus bandwidth across its GPUs.

Both run in child processes with deadlines, so a wedged GPU or a stuck collective ends in UNKNOWN, not a hang.
The floors are profile thresholds (bf16_gemm_min_tflops, nccl_allreduce_min_busbw_gbps); a profile without
one gets SKIP with the figure measured. Below a measured floor (or a cluster's recorded baseline) is FAIL; below a
public one (vendor peak, published nccl-tests figures; the profile's provenance says which) is WARN. The same
code runs on CPU (device cpu, backend gloo) for the self-tests.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
from pathlib import Path

from rlcheck.hardware import HardwareProfile
from rlcheck.process import subproc
from rlcheck.process.wait import free_loopback_port
from rlcheck.verdict import Status, Verdict

GEMM_FLOOR, BUSBW_FLOOR = "bf16_gemm_min_tflops", "nccl_allreduce_min_busbw_gbps"
GEMM_N, GEMM_ITERS, ALLREDUCE_BYTES, ALLREDUCE_ITERS = 8192, 20, 256 * 2**20, 20
GEMM_LABEL = f"bf16 {GEMM_N}^3 GEMM (torch.matmul), {GEMM_ITERS} iterations after 3 warm-up, per GPU"
ALLREDUCE_LABEL = (f"NCCL all-reduce of {ALLREDUCE_BYTES // 2**20} MiB float32 across this machine's GPUs, "
                   f"{ALLREDUCE_ITERS} iterations after 3 warm-up; bus bandwidth as nccl-tests defines it")
GEMM_CODE = """
import json, sys, time, torch
n, iters, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if kind == "cuda" else ["cpu"]
def sync(dev):
    if dev != "cpu":
        torch.cuda.synchronize(dev)
out = []
for dev in devices:
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    sync(dev)
    start = time.perf_counter()
    for _ in range(iters):
        a @ b
    sync(dev)
    seconds = time.perf_counter() - start
    name = torch.cuda.get_device_name(dev) if dev != "cpu" else "cpu"
    out.append({"device": dev, "name": name, "tflops": 2 * n**3 * iters / seconds / 1e12})
print("RLCHECK_GEMM " + json.dumps(out))
"""
ALLREDUCE_CODE = """
import json, os, sys, time, torch, torch.distributed as dist, torch.multiprocessing as mp
size_bytes, iters, backend, world, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
def run(rank):
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    dev = torch.device(f"cuda:{rank}") if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(dev)
    x = torch.ones(size_bytes // 4, dtype=torch.float32, device=dev)
    def sync():
        if backend == "nccl":
            torch.cuda.synchronize(dev)
    for _ in range(3):
        dist.all_reduce(x)
    sync(); dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x)
    sync()
    seconds = (time.perf_counter() - start) / iters
    if rank == 0:
        busbw = size_bytes / seconds * 2 * (world - 1) / world / 1e9
        print("RLCHECK_ALLREDUCE " + json.dumps({"world_size": world, "size_bytes": size_bytes, "busbw_gbps": busbw}),
              flush=True)
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.spawn(run, nprocs=world)
"""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GemmObservation:
    tflops_by_device: tuple[tuple[str, str, float], ...] = ()
    """(device, GPU name, bf16 TFLOP/s) for every GPU measured."""
    error: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class AllReduceObservation:
    world_size: int = 0
    size_bytes: int = 0
    busbw_gbps: float = 0.0
    """Bus bandwidth in GB/s: algorithm bandwidth x 2(n-1)/n, as nccl-tests reports it."""
    error: str = ""


def _run_script(code: str, args: list[str], prefix: str, timeout_s: float) -> tuple[str | None, subproc.Completed]:
    """Run code as a script file (torch.multiprocessing's spawn re-imports the main module) with a deadline."""
    with tempfile.TemporaryDirectory(prefix="rlcheck-gpu-smoke-") as folder:
        script = Path(folder) / "smoke.py"
        script.write_text(code)
        done = subproc.run([sys.executable, str(script), *args], timeout_s=timeout_s, env=subproc.child_env())
    line = next((x.removeprefix(prefix) for x in done.stdout.splitlines() if x.startswith(prefix)), None)
    return line, done


def collect_bf16_gemm(*, n: int = GEMM_N, iters: int = GEMM_ITERS, device: str = "cuda",
                      timeout_s: float = 300) -> GemmObservation:
    line, done = _run_script(GEMM_CODE, [str(n), str(iters), device], "RLCHECK_GEMM ", timeout_s)
    if line is None:
        return GemmObservation(error=f"the GEMM child ended with {done.why()}: {done.tail(2)}")
    rows = json.loads(line)
    if not rows:
        return GemmObservation(error="the GEMM child found no device")
    return GemmObservation(tflops_by_device=tuple((r["device"], r["name"], r["tflops"]) for r in rows))


def collect_allreduce(*, world_size: int, size_bytes: int = ALLREDUCE_BYTES, iters: int = ALLREDUCE_ITERS,
                      backend: str = "nccl", timeout_s: float = 300) -> AllReduceObservation:
    args = [str(size_bytes), str(iters), backend, str(world_size), str(free_loopback_port())]
    line, done = _run_script(ALLREDUCE_CODE, args, "RLCHECK_ALLREDUCE ", timeout_s)
    if line is None:
        return AllReduceObservation(world_size=world_size, size_bytes=size_bytes,
                                    error=f"the all-reduce children ended with {done.why()}: {done.tail(2)}")
    return AllReduceObservation(**json.loads(line))


def _floor(profile: HardwareProfile | None, name: str) -> tuple[float | None, str]:
    if profile is None:
        return None, "no hardware profile"
    value = profile.thresholds.get(name)
    return value, "" if value is not None else f"{profile.name} has no {name} yet"


PUBLIC = ("a public figure, not measured on this hardware: WARN until a measured floor replaces it; record this "
          "cluster's own with `rlcheck baseline record` from a healthy run")


def _said(profile: HardwareProfile | None, name: str) -> str:
    return f", {profile.provenance[name]} floor" if profile is not None and name in profile.provenance else ""


def _below(profile: HardwareProfile | None, name: str, seen: str, floor: float, remedy: str,
           base: dict[str, str]) -> Verdict:
    """FAIL below a measured (or baseline) floor; WARN below a public one."""
    if profile is not None and not profile.floor_measured(name):
        return Verdict(**base, status=Status.WARN, summary=f"{seen}; expected >= {floor:g} ({PUBLIC})", remedy=remedy)
    return Verdict(**base, status=Status.FAIL, summary=f"{seen}; expected >= {floor:g}", remedy=remedy)


def evaluate_bf16_gemm(obs: GemmObservation, profile: HardwareProfile | None) -> Verdict:
    base = {"details": "\n".join(f"{dev} {name}: {tf:.1f} TFLOP/s" for dev, name, tf in obs.tflops_by_device)}
    if obs.error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"bf16 GEMM did not run: {obs.error}")
    dev, name, slowest = min(obs.tflops_by_device, key=lambda row: row[2])
    seen = f"slowest of {len(obs.tflops_by_device)} GPU(s): {dev} ({name}) at {slowest:.1f} TFLOP/s bf16"
    floor, missing = _floor(profile, GEMM_FLOOR)
    if floor is None:
        return Verdict(**base, status=Status.SKIP, summary=f"no floor to judge by ({missing}); {seen}")
    if slowest < floor:
        return _below(profile, GEMM_FLOOR, seen, floor, "Look at that GPU's clocks, power and temperature "
                      "(nvidia-smi -q -d PERFORMANCE; the gpu_node_health clocks verdict); drain the node if it stays "
                      "slow", base)
    return Verdict(**base, status=Status.PASS, summary=f"{seen} (>= {floor:g}{_said(profile, GEMM_FLOOR)})")


def evaluate_allreduce(obs: AllReduceObservation, profile: HardwareProfile | None) -> Verdict:
    base = {"details": f"{obs.size_bytes / 2**20:g} MiB float32 over "
                                                         f"{obs.world_size} rank(s)"}
    if obs.error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"all-reduce did not run: {obs.error}")
    seen = f"all-reduce bus bandwidth {obs.busbw_gbps:.1f} GB/s over {obs.world_size} GPU(s)"
    floor, missing = _floor(profile, BUSBW_FLOOR)
    if floor is None:
        return Verdict(**base, status=Status.SKIP, summary=f"no floor to judge by ({missing}); {seen}")
    if obs.busbw_gbps < floor:
        return _below(profile, BUSBW_FLOOR, seen, floor, "Check NVLink (nvidia-smi nvlink -s, nvidia-smi topo -m) "
                      "and NCCL_DEBUG=INFO's transport", base)
    return Verdict(**base, status=Status.PASS, summary=f"{seen} (>= {floor:g}{_said(profile, BUSBW_FLOOR)})")
