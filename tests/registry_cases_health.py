"""Registry rows for the GPU node-health and version-uniformity checks: recorded healthy and faulty nodes."""

from __future__ import annotations

from rlcheck.hardware import get_profile
from rlcheck.preflight import gate
from rlcheck.preflight.registry import Inputs
from rlcheck.verdict import Status
from tests.gpu_health_recordings import fanout, node, nvml_reading, reading, renamed

INPUTS = gate.inputs_for("qwen3-4b-colocated", get_profile("h200"))
HEAD = renamed(node(reading(), "head_gpuless.json"), "head", is_head=True)


def _nodes(*workers) -> object:
    return fanout(HEAD, *(renamed(w, f"w{i}") for i, w in enumerate(workers)))


HEALTHY = _nodes(node(reading()), node(reading()))
FAULTY = "h200_2gpu_dbe_remap_pending_hw_slowdown_q.txt"

CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "cluster_node_xid": [
        ("clean-dmesg", INPUTS, HEALTHY, Status.PASS),
        ("xid79-fallen-off-bus", INPUTS, _nodes(node(reading()), node(reading(log="dmesg_xid.txt"))), Status.FAIL),
        ("dmesg-denied", INPUTS, _nodes(node(reading(log="", log_error="dmesg: exit code 1"))), Status.UNKNOWN)],
    "cluster_node_ecc": [
        ("no-uncorrectable", INPUTS, HEALTHY, Status.PASS),
        ("dbe-remap-pending", INPUTS, _nodes(node(reading()), node(reading(FAULTY))), Status.FAIL)],
    "cluster_node_throttle": [
        ("idle", INPUTS, HEALTHY, Status.PASS),
        ("hw-thermal-slowdown", INPUTS, _nodes(node(reading(FAULTY))), Status.FAIL),
        ("sw-thermal-slowdown", INPUTS, _nodes(node(reading("h200_past_uncorrectable_sw_thermal_q.txt"))),
         Status.WARN)],
    "cluster_node_clocks": [
        ("captured-h200-nvml-busy", INPUTS, _nodes(node(nvml_reading("nvml_h200_busy.json"))), Status.PASS),
        ("memory-and-sm-clock-stuck-low", INPUTS,
         _nodes(node(nvml_reading()), node(nvml_reading("nvml_clocks_stuck_low.json"))), Status.FAIL),
        ("held-by-application-clocks", INPUTS, _nodes(node(nvml_reading("nvml_app_clocks_held.json"))), Status.WARN)],
    "cluster_node_pcie": [
        ("captured-h200-nvml-idle", INPUTS, _nodes(node(nvml_reading())), Status.PASS),
        ("downtrained-x8", INPUTS, _nodes(node(nvml_reading()), node(nvml_reading("nvml_pcie_x8.json"))), Status.FAIL),
        ("gen3-while-busy", INPUTS, _nodes(node(nvml_reading("nvml_pcie_gen3_busy.json"))), Status.FAIL),
        ("slot-slower-than-gpu", INPUTS, _nodes(node(nvml_reading("nvml_pcie_slot_gen4.json"))), Status.WARN)],
    "cluster_node_nvlink": [
        ("no-errors", INPUTS, HEALTHY, Status.PASS),
        ("link-recovery", INPUTS, _nodes(node(reading(FAULTY, nvlink="nvlink_e_errors.txt"))), Status.FAIL)],
    "cluster_node_bus": [
        ("all-answer", INPUTS, HEALTHY, Status.PASS),
        ("one-gpu-missing", INPUTS, _nodes(node(reading(pci=2))), Status.FAIL)],
    "cluster_versions_uniform": [
        ("same-everywhere", INPUTS, HEALTHY, Status.PASS),
        ("one-node-other-torch", INPUTS,
         _nodes(node(reading()), node(reading()), node(reading(), torch_version="2.9.1+cu128")), Status.FAIL),
        ("one-node-other-sglang", INPUTS,
         _nodes(node(reading(), sglang_version="0.5.12.post1"), node(reading(), sglang_version="0.5.12.post1"),
                node(reading(), sglang_version="0.5.9")), Status.FAIL)],
    "gpu_node_health": [
        ("captured-h200", INPUTS, node(reading()), Status.PASS),
        ("dbe-xid79-hw-slowdown", INPUTS, node(reading(FAULTY, log="dmesg_xid.txt")), Status.FAIL),
        ("xid-app-fault-only", INPUTS, node(reading(log="dmesg_xid_app_only.txt")), Status.WARN),
        ("captured-h200-nvml", INPUTS, node(nvml_reading()), Status.PASS),
        ("nvml-ecc-uncorrectable", INPUTS, node(nvml_reading("nvml_ecc_uncorrectable.json")), Status.FAIL),
        ("nvml-pcie-x8", INPUTS, node(nvml_reading("nvml_pcie_x8.json")), Status.FAIL)],
}
