"""A KubeRay RayJob manifest as a Job: spec.entrypoint, spec.runtimeEnvYAML, and the cluster shape from the
GPU limits and replicas of rayClusterSpec's head and worker groups."""

from __future__ import annotations

import re
import shlex
from typing import Any

from rlcheck.job import replay as replay_mod
from rlcheck.job.job import Job, framework_of
from rlcheck.job.submit import CaptureFailed, JobFormatError, env_vars

_IMAGE_VERSION = re.compile(r"(slime|miles)[^:/]*:v?([0-9][\w.+-]*)", re.IGNORECASE)


def _gpus(pod: Any) -> int:
    """nvidia.com/gpu of the pod template's first container (limits, else requests); 0 when none."""
    containers = ((pod or {}).get("spec") or {}).get("containers") or [{}]
    res = containers[0].get("resources") or {}
    value = (res.get("limits") or {}).get("nvidia.com/gpu") or (res.get("requests") or {}).get("nvidia.com/gpu")
    return int(value or 0)


def shape(cluster: Any) -> tuple[int | None, int | None, list[str]]:
    """(GPU nodes, GPUs per node, findings) from rayClusterSpec."""
    if not isinstance(cluster, dict):
        return None, None, ["no rayClusterSpec (the job runs on an existing cluster): shape not stated"]
    groups = [(1, _gpus((cluster.get("headGroupSpec") or {}).get("template")))]
    groups += [(int(g.get("replicas", 1)), _gpus(g.get("template"))) for g in cluster.get("workerGroupSpecs") or []]
    gpu_groups = [(n, g) for n, g in groups if g and n]
    if not gpu_groups:
        return None, None, ["rayClusterSpec asks for no nvidia.com/gpu: shape not stated"]
    widths = sorted({g for _, g in gpu_groups})
    findings = [] if len(widths) == 1 else [f"worker groups differ in GPUs per node ({widths}): judged on the "
                                            f"narrowest, {widths[0]}"]
    return sum(n for n, _ in gpu_groups), widths[0], findings


def _version(cluster: Any) -> tuple[str, str | None]:
    head = ((cluster or {}).get("headGroupSpec") or {}).get("template") or {}
    image = str((((head.get("spec") or {}).get("containers") or [{}])[0]).get("image", ""))
    match = _IMAGE_VERSION.search(image)
    return (match.group(1).lower(), match.group(2)) if match else ("unknown", None)


def _yaml(source: str) -> Any:
    """PyYAML, imported when a RayJob is read: rlcheck itself needs only pytest in a training image."""
    try:
        import yaml
    except ImportError as exc:
        raise JobFormatError(f"{source}: reading a RayJob YAML needs PyYAML, which is not installed here "
                             f"(pip install pyyaml; or give the job as its launch script)") from exc
    return yaml


def _load(text: str, source: str) -> dict[str, Any]:
    yaml = _yaml(source)
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise JobFormatError(f"{source}: not valid YAML ({exc})") from exc
    jobs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "RayJob"]
    if not jobs:
        kinds = [d.get("kind", "no kind") if isinstance(d, dict) else type(d).__name__ for d in docs]
        raise JobFormatError(f"{source}: not a RayJob (found kind {', '.join(map(str, kinds)) or 'nothing'}); "
                             f"--job takes a KubeRay RayJob YAML")
    return jobs[0]


def read_rayjob(text: str, source: str) -> Job:
    spec = _load(text, source).get("spec") or {}
    entry = spec.get("entrypoint")
    if not isinstance(entry, str) or not entry.strip():
        raise CaptureFailed(f"{source}: RayJob spec.entrypoint is missing or empty")
    yaml = _yaml(source)
    try:
        runtime_env = yaml.safe_load(spec.get("runtimeEnvYAML") or "") or {}
    except yaml.YAMLError as exc:
        raise CaptureFailed(f"{source}: spec.runtimeEnvYAML is not valid YAML ({exc})") from exc
    try:
        meant = tuple(shlex.split(entry))
    except ValueError as exc:
        raise CaptureFailed(f"{source}: spec.entrypoint is not a shell command ({exc})") from exc
    played = replay_mod.replay(meant, entry)
    nodes, per_node, findings = shape(spec.get("rayClusterSpec"))
    framework, version = _version(spec.get("rayClusterSpec"))
    working_dir = runtime_env.get("working_dir") if isinstance(runtime_env, dict) else None
    return Job(argv=played.argv, intended_argv=meant, entrypoint=entry, env=env_vars(runtime_env, source),
               working_dir=working_dir, nodes=nodes, gpus_per_node=per_node,
               framework=framework if framework != "unknown" else framework_of(meant, working_dir),
               framework_version=version, source=source, source_format="rayjob",
               findings=(*findings, *played.findings), shell_error=played.shell_error, unseen=played.unseen)
