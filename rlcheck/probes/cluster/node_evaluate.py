"""Judge one node's observation (rlcheck.probes.node.collect) against the hardware profile: pure functions to a Verdict.

Each evaluate_node_* takes what Ray says about the node (NodeFacts), what the node said about itself
(NodeObservation) and the profile (None for --hardware=none, or auto with no match).
"""

from __future__ import annotations

from rlcheck import catalog
from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.node.collect import EFA_NAME_PREFIXES, NodeObservation
from rlcheck.probes.node.gpus import GpuInfo
from rlcheck.probes.node.tms import SELECTION_RULES
from rlcheck.verdict import Status, Verdict

# First Linux driver branch of each CUDA major (NVIDIA CUDA toolkit release notes, "CUDA Toolkit and
# Corresponding Driver Versions": 13.0 GA >= 580.65.06, 12.0 GA >= 525.60.13, 11.0 GA >= 450.51.06).
DRIVER_BRANCH_FOR_CUDA = {13: 580, 12: 525, 11: 450}
GPU_REMEDY = ("Look at the node (nvidia-smi; dmesg for Xid errors) and at how its Ray node was started "
              "(--num-gpus, or the pod's nvidia.com/gpu limit under KubeRay); drain or replace it.")
SHM_REMEDY = ("Give the Ray pods a larger /dev/shm: a memory-backed emptyDir mounted at /dev/shm (KubeRay) or "
              "docker run --shm-size=...")


def gpus_text(gpus: tuple[GpuInfo, ...]) -> str:
    if not gpus:
        return "no GPU"
    kinds = sorted({(g.name, g.compute_capability) for g in gpus})
    return f"{len(gpus)} x " + ", ".join(f"{name} (sm_{cc.replace('.', '') or '?'})" for name, cc in kinds)


def is_gpu_node(node: NodeFacts, obs: NodeObservation) -> bool:
    """GPUs seen, advertised to Ray, or NVIDIA GPUs on the PCI bus (a node whose driver died lists none and
    advertises none: it is a broken GPU node, never a CPU-only one)."""
    return bool(obs.gpus) or node.ray_gpus > 0 or bool(pci_gpus(obs))


def pci_gpus(obs: NodeObservation) -> int:
    return (obs.health.pci_gpus or 0) if obs.health is not None else 0


def _cuda_major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def driver_cuda_major(driver_version: str) -> int | None:
    """The newest CUDA major a driver runs (without the forward-compatibility package), None if unparsable."""
    branch = _cuda_major(driver_version.split(",")[0].strip())
    if branch is None:
        return None
    return next((cuda for cuda, first in DRIVER_BRANCH_FOR_CUDA.items() if branch >= first), 0)


def _driver_too_old(node: NodeFacts, driver: str, have: int, need: int, runtime: str) -> dict[str, str]:
    """Summary and remedy of a driver older than the CUDA runtime needs: the branch that runs it where rlcheck knows
    one (else: newer than the newest it knows), and an image of the driver's own CUDA major where there is one."""
    newest = max(DRIVER_BRANCH_FOR_CUDA.values())
    known = need in DRIVER_BRANCH_FOR_CUDA
    first = (f"driver >= {DRIVER_BRANCH_FOR_CUDA[need]}" if known else
             f"a branch newer than {newest} (rlcheck knows none for CUDA {need} yet)")
    install = f"branch {DRIVER_BRANCH_FOR_CUDA[need]} or newer" if known else f"a branch newer than {newest}"
    runs = (f"runs CUDA up to {have}.x" if have else
            f"is older than branch {min(DRIVER_BRANCH_FOR_CUDA.values())}, the oldest rlcheck knows (CUDA 11)")
    image = (f", or an image whose CUDA major is {have}" if have else "")
    return {"summary": f"{node.where}: driver {driver} {runs}; {runtime} needs {first}",
            "remedy": f"Install an NVIDIA driver of {install} on the node{image} (NVIDIA's cuda-compat package "
                      "also lifts this on data-centre GPUs)"}


def evaluate_node_gpus(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    base = {"node": node.label, "details": f"read with {obs.gpu_source}"}
    if obs.gpu_error and pci_gpus(obs):  # GPUs on the bus and a driver that does not answer: a broken node
        return Verdict(**base, status=Status.FAIL, remedy=GPU_REMEDY,
                       summary=f"{node.where}: {pci_gpus(obs)} NVIDIA GPU(s) on the PCI bus, the driver does not "
                               f"answer: {obs.gpu_error}")
    if obs.gpu_error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: could not read GPUs: {obs.gpu_error}")
    seen = gpus_text(obs.gpus)
    if not is_gpu_node(node, obs):
        return Verdict(**base, status=Status.SKIP, summary=f"{node.where}: CPU-only node (no GPU seen, 0 advertised "
                                                           "to Ray): not a GPU node")
    if profile is None:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"needs a hardware profile (--hardware) to judge {node.where}: found none; "
                               f"it has {seen}")
    problems = []
    if len(obs.gpus) != profile.gpus_per_node:
        problems.append(f"{len(obs.gpus)} GPUs; expected {profile.gpus_per_node}")
    if names := sorted({g.name for g in obs.gpus if not profile.matches_gpu_name(g.name)}):
        problems.append(f"{', '.join(names)} is not {profile.gpu_model}")
    if ccs := sorted({g.compute_capability or "?" for g in obs.gpus} - {profile.compute_capability}):
        problems.append(f"compute capability {', '.join(ccs)}; expected {profile.compute_capability}")
    if node.ray_gpus != len(obs.gpus):
        problems.append(f"Ray advertises {node.ray_gpus:g} GPUs; the node has {len(obs.gpus)}")
    if problems:
        return Verdict(**base, status=Status.FAIL, remedy=GPU_REMEDY,
                       summary=f"{node.where}: {'; '.join(problems)} ({profile.name})")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: {seen}, as {profile.name} expects")


def evaluate_node_driver(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    base = {"node": node.label,
            "details": f"GPUs read with {obs.gpu_source}; torch {obs.torch_version or 'absent'}"}
    if obs.gpu_error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: could not read GPUs: {obs.gpu_error}")
    if not obs.gpus:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"{node.where}: no GPU here; the driver matters on GPU nodes")
    need = _cuda_major(obs.torch_cuda)
    if need is None:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"{node.where}: torch {obs.torch_version or 'not installed'} has no CUDA runtime "
                               "to match")
    have = driver_cuda_major(obs.driver_version)
    if have is None:
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"{node.where}: {gpus_text(obs.gpus)} but the driver version is unread "
                               f"({obs.driver_version or 'nothing reported'})")
    runtime = f"torch {obs.torch_version} (CUDA {obs.torch_cuda})"
    if have < need:
        return Verdict(**base, status=Status.FAIL, **_driver_too_old(node, obs.driver_version, have, need, runtime))
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: driver {obs.driver_version} runs {runtime}")


def evaluate_node_tms(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    tms = obs.tms
    candidates = ", ".join(SELECTION_RULES.get(tms.rule, ("the package picks",)))
    base = {"node": node.label,
            "details": f"preload rule {tms.rule}: {candidates} in "
                       f"{tms.package_dir or '-'}; LD_LIBRARY_PATH={obs.ld_library_path!r}"}
    if obs.gpu_error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: could not read GPUs: {obs.gpu_error}")
    if not obs.gpus:
        return Verdict(**base, status=Status.SKIP, summary=f"{node.where}: no GPU here; SLIME preloads "
                                                           "torch_memory_saver only in train actors on GPU nodes")
    if not tms.package_dir:
        return Verdict(**base, status=Status.SKIP, summary=f"{node.where}: torch_memory_saver is not installed "
                                                           "(SLIME needs it only with offload, e.g. --colocate)")
    if tms.error:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: cannot read {tms.library}: {tms.error}")
    if not tms.library:
        return Verdict(**base, status=Status.FAIL, remedy=catalog.get("tms-cu12-preload").remedy,
                       summary=f"{node.where}: SLIME's rule {tms.rule} finds no preload library in {tms.package_dir}")
    runtime = _cuda_major(obs.torch_cuda)
    if runtime is None or tms.cudart_major is None:
        return Verdict(**base, status=Status.SKIP if runtime is None else Status.PASS,
                       summary=f"{node.where}: {tms.library} with torch CUDA {obs.torch_cuda or 'none'}: "
                               "no libcudart major to match")
    lib = f"{tms.library} (NEEDED libcudart.so.{tms.cudart_major})"
    if tms.cudart_major != runtime:
        return _tms_fail(base, "tms-cu12-preload", f"{node.where}: SLIME ({tms.rule}) preloads {lib} on a CUDA "
                                                   f"{obs.torch_cuda} runtime; expected libcudart.so.{runtime}")
    if not tms.cudart_found_at:
        return _tms_fail(base, "tms-loader-unresolved",
                         f"{node.where}: {lib} but the loader finds no libcudart.so.{runtime} "
                         "(LD_LIBRARY_PATH, ld.so.cache, system dirs)")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: {lib} resolves to {tms.cudart_found_at}")


def _tms_fail(base: dict[str, str], failure_id: str, summary: str) -> Verdict:
    return Verdict(**base, status=Status.FAIL, failure_id=failure_id, remedy=catalog.get(failure_id).remedy,
                   summary=summary)


def evaluate_node_shm(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    base = {"node": node.label}
    if obs.shm_bytes is None:
        return Verdict(**base, status=Status.FAIL, summary=f"{node.where}: /dev/shm does not exist", remedy=SHM_REMEDY)
    size = f"/dev/shm is {obs.shm_bytes / 2**30:.2f} GiB"
    floor = profile.thresholds.get("shm_min_gib") if profile else None
    if profile is None or floor is None:
        found = f"{profile.name} has no shm_min_gib" if profile else "found none"
        return Verdict(**base, status=Status.SKIP,
                       summary=f"needs a hardware profile with a /dev/shm floor to judge {node.where}: {found}; {size}")
    if obs.shm_bytes < floor * 2**30:
        return Verdict(**base, status=Status.FAIL, remedy=SHM_REMEDY, details=profile.source.get("shm_min_gib", ""),
                       summary=f"{node.where}: {size}; expected >= {floor:g} GiB ({profile.name})")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: {size} (>= {floor:g} GiB, {profile.name})")


def evaluate_node_efa(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    found = len(obs.efa_devices)
    base = {"node": node.label,
            "details": f"EFA devices: {', '.join(obs.efa_devices) or 'none'} (/sys/class/infiniband entries with "
                       f"driver efa, or named {'/'.join(EFA_NAME_PREFIXES)}* where the driver is unreadable)"}
    if obs.gpu_error and node.ray_gpus == 0:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"{node.where}: could not read GPUs: {obs.gpu_error}")
    if not is_gpu_node(node, obs):
        return Verdict(**base, status=Status.SKIP, summary=f"{node.where}: CPU-only node: NCCL traffic is between GPU "
                                                           "nodes")
    if profile is None:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"needs a hardware profile (--hardware) to judge {found} EFA device(s) on {node.where}")
    want = profile.efa_interfaces_per_node
    summary = f"{node.where}: {found} EFA device(s); {profile.name} has {want}"
    if found < want:
        return Verdict(**base, status=Status.FAIL, summary=summary,
                       remedy="Check the EFA device plugin and the pod's vpc.amazonaws.com/efa request; without EFA "
                              "NCCL falls back to TCP sockets")
    if found > want:
        return Verdict(**base, status=Status.WARN, summary=f"{summary}: another instance type than the profile's?")
    return Verdict(**base, status=Status.PASS, summary=summary)


def evaluate_head_gpuless(node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
    base = {"node": node.label,
            "details": f"GPUs read with {obs.gpu_source}{'; ' + obs.gpu_error if obs.gpu_error else ''}. The job "
                       "driver on a GPU-less head needs Megatron's validate_args guard (catalogue driver-gpu-probe)."}
    if node.ray_gpus > 0:
        return Verdict(**base, status=Status.FAIL,
                       summary=f"{node.where} advertises {node.ray_gpus:g} GPUs to Ray; expected 0: SLIME's job "
                               "driver runs on the head and the placement group belongs on the GPU workers",
                       remedy="Start the head with --num-gpus=0 (KubeRay: rayStartParams num-gpus: '0') and "
                              "NVIDIA_VISIBLE_DEVICES=void, as the reference RayCluster does")
    if obs.gpus:
        return Verdict(**base, status=Status.WARN,
                       summary=f"{node.where} sees {gpus_text(obs.gpus)} but advertises 0 to Ray: they sit idle")
    return Verdict(**base, status=Status.PASS, summary=f"{node.where}: 0 GPUs advertised to Ray, none seen")
