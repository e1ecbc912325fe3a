"""Registry rows for gpu_node_inventory: recorded readings of this machine against a declared or detected profile."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from rlcheck.hardware import get_profile
from rlcheck.preflight import gate
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.gpu.gpu_inventory import Inventory
from rlcheck.verdict import Status

READINGS = Path(__file__).parent / "data" / "observations" / "gpu_inventory"
DECLARED = dataclasses.replace(gate.inputs_for("qwen3-4b-colocated", get_profile("h200")), declared=True)
DETECTED = gate.inputs_for("qwen3-4b-colocated", get_profile("h200"))
NO_PROFILE = gate.inputs_for("qwen3-4b-colocated", None)


def inventory(name: str) -> Inventory:
    return Inventory.from_dict(json.loads((READINGS / name).read_text()))


CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "gpu_node_inventory": [
        ("8xh200-declared", DECLARED, inventory("h200_8gpu_healthy.json"), Status.PASS),
        ("dead-driver-declared", DECLARED, inventory("dead_driver_smi_exit9.json"), Status.FAIL),
        ("dead-driver-auto", DETECTED, inventory("dead_driver_smi_exit9.json"), Status.UNKNOWN),
        ("7-of-8-declared", DECLARED, inventory("h200_7_of_8.json"), Status.FAIL),
        ("h100-as-h200", DECLARED, inventory("h100_node.json"), Status.FAIL),
        ("pod-without-gpus", DECLARED, inventory("pod_without_gpus.json"), Status.UNKNOWN),
        ("cpu-machine-no-profile", NO_PROFILE, inventory("cpu_machine.json"), Status.SKIP),
        ("no-local-gpus", dataclasses.replace(DECLARED, local_gpus=False), None, Status.SKIP)],
}
