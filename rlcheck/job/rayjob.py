"""A KubeRay RayJob manifest as a Job: spec.entrypoint, spec.runtimeEnvYAML, and the cluster shape from the
GPU limits and replicas of rayClusterSpec's head and worker groups."""

from __future__ import annotations

import re
import shlex
from typing import Any

from rlcheck.job import replay as replay_mod
from rlcheck.job import typed
from rlcheck.job.job import Job, framework_of
from rlcheck.job.submit import CaptureFailed, JobFormatError, env_vars

_IMAGE_VERSION = re.compile(r"(slime|miles)[^:/]*:v?([0-9][\w.+-]*)", re.IGNORECASE)


def _gpus(pod: Any, where: str) -> int:
    """nvidia.com/gpu of the pod template's first container (limits, else requests); 0 when none."""
    spec = typed.get(pod, "spec", dict, where, default={}) if pod is not None else {}
    containers = typed.get(spec, "containers", list, f"{where}.spec", default=[]) or [{}]
    res = typed.get(containers[0], "resources", dict, f"{where}.spec.containers[0]", default={})
    at = f"{where}.spec.containers[0].resources"
    for part in ("limits", "requests"):
        value = typed.count(typed.get(res, part, dict, at, default={}), "nvidia.com/gpu", f"{at}.{part}")
        if value:
            return value
    return 0


def shape(cluster: Any) -> tuple[int | None, int | None, list[str]]:
    """(GPU nodes, GPUs per node, findings) from rayClusterSpec; JobFormatError names a field of the wrong type."""
    if not isinstance(cluster, dict):
        return None, None, ["no rayClusterSpec (the job runs on an existing cluster): shape not stated"]
    where = "spec.rayClusterSpec"
    head = typed.get(cluster, "headGroupSpec", dict, where, default={})
    groups = [(1, _gpus(typed.get(head, "template", dict, f"{where}.headGroupSpec"), f"{where}.headGroupSpec"))]
    for i, group in enumerate(typed.get(cluster, "workerGroupSpecs", list, where, default=[])):
        at = f"{where}.workerGroupSpecs[{i}]"
        replicas = typed.count(group, "replicas", at, default=1) or 0
        groups.append((replicas, _gpus(typed.get(group, "template", dict, at), f"{at}.template")))
    gpu_groups = [(n, g) for n, g in groups if g and n]
    if not gpu_groups:
        return None, None, ["rayClusterSpec asks for no nvidia.com/gpu: shape not stated"]
    widths = sorted({g for _, g in gpu_groups})
    findings = [] if len(widths) == 1 else [f"worker groups differ in GPUs per node ({widths}): judged on the "
                                            f"narrowest, {widths[0]}"]
    return sum(n for n, _ in gpu_groups), widths[0], findings


def _version(cluster: Any) -> tuple[str, str | None]:
    try:
        head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
        image = str(head.get("image", ""))
    except (KeyError, IndexError, TypeError, AttributeError):  # read by shape() first: a bad type is named there
        image = ""
    match = _IMAGE_VERSION.search(image)
    return (match.group(1).lower(), match.group(2)) if match else ("unknown", None)


def _load(text: str, source: str) -> dict[str, Any]:
    docs = typed.load_yaml_all(text, source, "the manifest")
    jobs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "RayJob"]
    if not jobs:
        kinds = [d.get("kind", "no kind") if isinstance(d, dict) else type(d).__name__ for d in docs]
        raise JobFormatError(f"{source}: not a RayJob (found kind {', '.join(map(str, kinds)) or 'nothing'}); "
                             f"--job takes a KubeRay RayJob YAML")
    return jobs[0]


def read_rayjob(text: str, source: str) -> Job:
    spec = typed.get(_load(text, source), "spec", dict, f"{source}: RayJob", default={})
    entry = typed.get(spec, "entrypoint", str, f"{source}: RayJob spec")
    if entry is None or not entry.strip():
        raise CaptureFailed(f"{source}: RayJob spec.entrypoint is missing or empty")
    env_text = typed.get(spec, "runtimeEnvYAML", str, f"{source}: RayJob spec", default="")
    env_docs = typed.load_yaml_all(env_text, source, "spec.runtimeEnvYAML")
    runtime_env = env_docs[0] if env_docs else {}
    if not isinstance(runtime_env, dict):
        raise JobFormatError(f"{source}: spec.runtimeEnvYAML is {type(runtime_env).__name__}, expected a mapping")
    try:
        meant = tuple(shlex.split(entry))
    except ValueError as exc:
        raise CaptureFailed(f"{source}: spec.entrypoint is not a shell command ({exc})") from exc
    working_dir = typed.get(runtime_env, "working_dir", str, f"{source}: spec.runtimeEnvYAML")
    played = replay_mod.replay(meant, entry, working_dir)
    nodes, per_node, findings = shape(spec.get("rayClusterSpec"))
    framework, version = _version(spec.get("rayClusterSpec"))
    return Job(argv=played.argv, intended_argv=meant, entrypoint=entry, env=env_vars(runtime_env, source),
               working_dir=working_dir, nodes=nodes, gpus_per_node=per_node,
               framework=framework if framework != "unknown" else framework_of(meant, working_dir),
               framework_version=version, source=source, source_format="rayjob",
               findings=(*findings, *played.findings), shell_error=played.shell_error, unseen=played.unseen)
