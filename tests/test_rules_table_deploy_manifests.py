"""Rule table for the KubeRay manifests `rlcheck render` gives (rlcheck.deploy.manifests): the whole RayCluster and
RayJob for a recipe on a profile, the worker count rounded up to whole nodes (both sides of a node's worth of GPUs),
EFA asked for only where the profile has it, secrets by name from one Kubernetes secret and never by value, and the
argv carried as JSON so no shell reads it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from rlcheck import hardware, recipes
from rlcheck.deploy import manifests


@dataclasses.dataclass
class _Placement:
    placement_group_gpus: int


@dataclasses.dataclass
class _Recipe:
    """The parts of a Recipe the manifests read."""

    id: str = "qwen3.5-4b"
    gpus: int = 16
    secret_env: tuple[str, ...] = ("HF_TOKEN", "WANDB_API_KEY")
    env: dict = dataclasses.field(default_factory=lambda: {"A": "1", "NCCL_DEBUG": "WARN"})
    args: list = dataclasses.field(default_factory=lambda: ["python3", "train.py", "--x", "a b;$(rm)"])

    @property
    def placement(self) -> _Placement:
        return _Placement(self.gpus)

    def env_dict(self) -> dict:
        return dict(self.env)

    def argv(self) -> list:
        return list(self.args)


H200 = hardware.get_profile("h200")
SHM_MOUNT = [{"name": "dshm", "mountPath": "/dev/shm"}]
SHM_VOLUME = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]


def _head(image: str) -> dict:
    return {"rayStartParams": {"num-gpus": "0", "dashboard-host": "0.0.0.0"},
            "template": {"spec": {"containers": [{
                "name": "ray-head", "image": image, "imagePullPolicy": "IfNotPresent",
                "resources": {"limits": {"cpu": "8", "memory": "64Gi"}, "requests": {"cpu": "8", "memory": "64Gi"}},
                "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
                        {"name": "RAY_memory_monitor_refresh_ms", "value": "0"}],
                "ports": [{"containerPort": 6379, "name": "gcs"}, {"containerPort": 8265, "name": "dashboard"},
                          {"containerPort": 10001, "name": "client"}],
                "volumeMounts": SHM_MOUNT}], "volumes": SHM_VOLUME}}}


def _secret(name: str, key: str) -> dict:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": key, "optional": True}}}


def _spec(nodes: int, image: str, limits: dict) -> dict:
    worker = {"name": "ray-worker", "image": image, "imagePullPolicy": "IfNotPresent",
              "resources": {"limits": limits, "requests": limits},
              "env": [{"name": "A", "value": "1"}, {"name": "NCCL_DEBUG", "value": "WARN"},
                      _secret("HF_TOKEN", "hf_token"), _secret("WANDB_API_KEY", "wandb_api_key")],
              "volumeMounts": SHM_MOUNT}
    return {"rayVersion": "2.55.1", "headGroupSpec": _head(image), "workerGroupSpecs": [{
        "groupName": "h200-gpu", "replicas": nodes, "minReplicas": nodes, "maxReplicas": nodes, "rayStartParams": {},
        "template": {"spec": {"containers": [worker], "volumes": SHM_VOLUME,
                              "nodeSelector": {"node.kubernetes.io/instance-type": "p5en.48xlarge"}}}}]}


H200_LIMITS = {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "16"}


def test_constants_a_user_meets_in_the_manifests():
    assert (manifests.RAY_VERSION, manifests.SECRET_NAME) == ("2.55.1", "hf-token")
    assert manifests.DEFAULT_IMAGE == "rlcheck/slime-training:slime0.2.4-sgl0.5.12.post1"


@pytest.mark.parametrize(("gpus", "nodes"), [(1, 1), (8, 1), (9, 2), (16, 2), (17, 3), (24, 3)])
def test_ray_cluster_whole_with_workers_rounded_up_to_whole_nodes(gpus, nodes):
    got = manifests.ray_cluster(_Recipe(gpus=gpus), H200, "img:1")  # type: ignore[arg-type]
    assert got == {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rlcheck-qwen3-5-4b-h200"},
                   "spec": _spec(nodes, "img:1", H200_LIMITS)}


def test_ray_cluster_default_image():
    got = manifests.ray_cluster(_Recipe(), H200)  # type: ignore[arg-type]
    assert got["spec"] == _spec(2, manifests.DEFAULT_IMAGE, H200_LIMITS)
    assert manifests.ray_cluster_spec(_Recipe(), H200) == _spec(2, manifests.DEFAULT_IMAGE, H200_LIMITS)  # type: ignore[arg-type]


@pytest.mark.parametrize(("efa", "limits"), [
    (0, {"nvidia.com/gpu": "8"}), (1, {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "1"}),
    (32, {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}),
])
def test_worker_resources_efa_only_where_the_profile_has_it(efa, limits):
    got = manifests.worker_resources(dataclasses.replace(H200, efa_interfaces_per_node=efa))
    assert got == {"limits": limits, "requests": limits}
    assert got["requests"] is not got["limits"]  # two objects: a YAML dump writes no anchor between them


def test_ray_cluster_without_secrets_has_plain_env_only():
    got = manifests.ray_cluster_spec(_Recipe(secret_env=(), env={}), H200)  # type: ignore[arg-type]
    assert got["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["env"] == []


@pytest.mark.parametrize("deadline_s", [14400, 60])
def test_ray_job_whole_with_the_argv_as_json(deadline_s):
    recipe = _Recipe()
    kw = {} if deadline_s == 14400 else {"deadline_s": deadline_s}
    got = manifests.ray_job(recipe, H200, "img:2", **kw)  # type: ignore[arg-type]
    runtime_env = {"env_vars": {"A": "1", "NCCL_DEBUG": "WARN",
                                "RLCHECK_ARGV": '["python3", "train.py", "--x", "a b;$(rm)"]'}}
    assert got == {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "rlcheck-qwen3-5-4b-h200"},
                   "spec": {"entrypoint": "python3 -m rlcheck.exec_argv", "runtimeEnvYAML": json.dumps(runtime_env),
                            "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": 600,
                            "activeDeadlineSeconds": deadline_s, "submissionMode": "K8sJobMode",
                            "rayClusterSpec": _spec(2, "img:2", H200_LIMITS)}}
    assert json.loads(json.loads(got["spec"]["runtimeEnvYAML"])["env_vars"]["RLCHECK_ARGV"]) == recipe.argv()


def test_ray_job_default_image():
    assert manifests.ray_job(_Recipe(), H200)["spec"]["rayClusterSpec"] == _spec(  # type: ignore[arg-type]
        2, manifests.DEFAULT_IMAGE, H200_LIMITS)


def test_real_recipe_secret_by_name_never_by_value(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secretvalue")
    recipe = recipes.get("qwen3-4b-colocated", H200)
    for doc in (manifests.ray_job(recipe, H200), manifests.ray_cluster(recipe, H200)):
        assert "hf_secretvalue" not in json.dumps(doc)
    env = manifests.ray_cluster(recipe, H200)["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["env"]
    assert env[-1] == _secret("HF_TOKEN", "hf_token")
    assert env[:-1] == [{"name": k, "value": v} for k, v in recipe.env_dict().items()]
