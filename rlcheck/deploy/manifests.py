"""KubeRay RayCluster and RayJob manifests sized from a hardware profile (plain dicts, dumped as YAML/JSON)."""

from __future__ import annotations

import json
import math
from typing import Any

from rlcheck.cluster.exec_argv import ENV_NAME
from rlcheck.hardware import HardwareProfile
from rlcheck.recipes.recipe import Recipe

RAY_VERSION = "2.55.1"
DEFAULT_IMAGE = "rlcheck/slime-training:slime0.2.4-sgl0.5.12.post1"
SECRET_NAME = "hf-token"  # a Kubernetes secret holding each of recipe.secret_env under its lowercase name
SHM_MOUNT = [{"name": "dshm", "mountPath": "/dev/shm"}]
SHM_VOLUME = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]


def _secret_env(recipe: Recipe) -> list[dict[str, Any]]:
    return [{"name": name, "valueFrom": {"secretKeyRef": {"name": SECRET_NAME, "key": name.lower(),
                                                          "optional": True}}} for name in recipe.secret_env]


def _plain_env(values: dict[str, str]) -> list[dict[str, Any]]:
    return [{"name": k, "value": v} for k, v in values.items()]


def worker_resources(hw: HardwareProfile) -> dict[str, Any]:
    limits: dict[str, Any] = {"nvidia.com/gpu": str(hw.gpus_per_node)}  # quantities: strings, as the API types them
    if hw.efa_interfaces_per_node:
        limits["vpc.amazonaws.com/efa"] = str(hw.efa_interfaces_per_node)
    return {"limits": limits, "requests": dict(limits)}


def _head(image: str) -> dict[str, Any]:
    # GPU-less head: SLIME's driver runs here (Megatron's probes are guarded in the image), and
    # NVIDIA_VISIBLE_DEVICES=void keeps the NVIDIA runtime from failing on a node without a driver.
    container = {"name": "ray-head", "image": image, "imagePullPolicy": "IfNotPresent",
                 "resources": {"limits": {"cpu": "8", "memory": "64Gi"}, "requests": {"cpu": "8", "memory": "64Gi"}},
                 "env": _plain_env({"NVIDIA_VISIBLE_DEVICES": "void", "RAY_memory_monitor_refresh_ms": "0"}),
                 "ports": [{"containerPort": 6379, "name": "gcs"}, {"containerPort": 8265, "name": "dashboard"},
                           {"containerPort": 10001, "name": "client"}],
                 "volumeMounts": SHM_MOUNT}
    return {"rayStartParams": {"num-gpus": "0", "dashboard-host": "0.0.0.0"},
            "template": {"spec": {"containers": [container], "volumes": SHM_VOLUME}}}


def _workers(recipe: Recipe, hw: HardwareProfile, image: str) -> dict[str, Any]:
    nodes = math.ceil(recipe.placement.placement_group_gpus / hw.gpus_per_node)
    container = {"name": "ray-worker", "image": image, "imagePullPolicy": "IfNotPresent",
                 "resources": worker_resources(hw), "env": [*_plain_env(recipe.env_dict()), *_secret_env(recipe)],
                 "volumeMounts": SHM_MOUNT}
    return {"groupName": f"{hw.name}-gpu", "replicas": nodes, "minReplicas": nodes, "maxReplicas": nodes,
            "rayStartParams": {},
            "template": {"spec": {"containers": [container], "volumes": SHM_VOLUME,
                                  "nodeSelector": {"node.kubernetes.io/instance-type": hw.instance_types[0]}}}}


def ray_cluster_spec(recipe: Recipe, hw: HardwareProfile, image: str = DEFAULT_IMAGE) -> dict[str, Any]:
    return {"rayVersion": RAY_VERSION, "headGroupSpec": _head(image), "workerGroupSpecs": [_workers(recipe, hw, image)]}


def _name(recipe: Recipe, hw: HardwareProfile) -> str:
    return f"rlcheck-{recipe.id}-{hw.name}".replace(".", "-")


def ray_cluster(recipe: Recipe, hw: HardwareProfile, image: str = DEFAULT_IMAGE) -> dict[str, Any]:
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": _name(recipe, hw)},
            "spec": ray_cluster_spec(recipe, hw, image)}


def ray_job(recipe: Recipe, hw: HardwareProfile, image: str = DEFAULT_IMAGE, deadline_s: int = 14400) -> dict[str, Any]:
    """A RayJob whose entrypoint has no shell-sensitive text: the argv travels as JSON (rlcheck.exec_argv)."""
    env = {**recipe.env_dict(), ENV_NAME: json.dumps(recipe.argv())}
    runtime_env = {"env_vars": env}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": _name(recipe, hw)},
            "spec": {"entrypoint": "python3 -m rlcheck.exec_argv", "runtimeEnvYAML": json.dumps(runtime_env),
                     "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": 600,
                     "activeDeadlineSeconds": deadline_s, "submissionMode": "K8sJobMode",
                     "rayClusterSpec": ray_cluster_spec(recipe, hw, image)}}
