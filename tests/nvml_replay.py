"""A recorded NVML dump (tests/data/gpu_health/nvml_*.json) answering gpu_nvml's calls as NVML would.

record(ReplayNvml(dump)) runs the reader's own calls against the recording, so every judge is tested through the
reader without a GPU: an answer recorded as {"error": ...} raises NvmlCallError, a call the recording lacks too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlcheck.probes.node.gpu_nvml import NvmlCallError, call_key

DATA = Path(__file__).parent / "data" / "gpu_health"


def dump(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text())


class ReplayNvml:
    def __init__(self, recording: dict[str, Any]) -> None:
        self.recording = recording
        self.calls: list[str] = []

    def call(self, function: str, *args: Any) -> Any:
        self.calls.append(function)
        if function in ("nvmlInit", "nvmlShutdown"):
            if function == "nvmlInit" and "error" in self.recording:
                raise NvmlCallError(self.recording["error"].removeprefix("nvmlInit: "))
            return None
        if function == "nvmlSystemGetDriverVersion":
            return self.recording["driver"]
        if function == "nvmlDeviceGetCount":
            return len(self.recording["gpus"])
        if function == "nvmlDeviceGetHandleByIndex":
            return args[0]
        handle, *rest = args
        answer = self.recording["gpus"][handle].get(call_key(function, tuple(rest)),
                                                    {"error": f"{function}: not in the recording"})
        if isinstance(answer, dict):
            raise NvmlCallError(answer["error"])
        return answer
