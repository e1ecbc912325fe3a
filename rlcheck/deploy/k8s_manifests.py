"""rlcheck's own Kubernetes manifests, per hardware profile: the preflight as a Job against a running RayCluster, and
the quick per-node tier as a DaemonSet that labels, taints and annotates its node, with the RBAC it needs and no more.

The DaemonSet requests no `nvidia.com/gpu`: the device plugin would reserve every GPU of the node for it, and it
would never schedule on a node a training job holds. It reads counters only (nvidia-smi, the kernel log), through
NVIDIA_VISIBLE_DEVICES=all as node monitors (dcgm-exporter) do, and CAP_SYSLOG for dmesg.
"""

from __future__ import annotations

import shlex
from typing import Any

from rlcheck.deploy import k8s_node, manifests
from rlcheck.hardware import HardwareProfile

NAMESPACE = "rlcheck"
NODE_STATUS = "rlcheck-node-status"
KINDS = ("preflight-job", "preflight-daemonset", "rbac")
K8S_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
RBAC_RULES = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
"""kubectl get node (the current taints), kubectl patch node (labels, annotations) and kubectl taint (a patch)."""
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
OWN_TOLERATION = {"key": k8s_node.TAINT_KEY, "operator": "Exists", "effect": k8s_node.TAINT_EFFECT}
"""The DaemonSet tolerates the taint it puts on: a restarted pod must still run on the node to lift it."""


def _labels(component: str, hw: HardwareProfile) -> dict[str, str]:
    return {"app.kubernetes.io/name": "rlcheck", "app.kubernetes.io/component": component,
            "rlcheck.io/hardware": hw.name}


def _meta(name: str, labels: dict[str, str], namespace: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return meta


def default_ray_address(recipe_id: str, hw: HardwareProfile, namespace: str) -> str:
    """The dashboard of the RayCluster `rlcheck render` gives for the recipe: KubeRay names its service
    <cluster>-head-svc, reached across namespaces as <service>.<namespace>.svc."""
    cluster = f"rlcheck-{recipe_id}-{hw.name}".replace(".", "-")
    return f"http://{cluster}-head-svc.{namespace}.svc:8265"


def preflight_job(hw: HardwareProfile, recipe_id: str, ray_address: str, image: str = manifests.DEFAULT_IMAGE,
                  namespace: str = NAMESPACE, deadline_s: int = 3600) -> dict[str, Any]:
    """`rlcheck preflight --ray-address` from a pod: a Ray client, so no GPU (NVIDIA_VISIBLE_DEVICES=void as on
    the head, and --no-local-gpus: the pod's own GPUs are not judged); the cluster checks reach every GPU node through
    Ray. The verdict is the exit code and the log."""
    labels = _labels("preflight", hw)
    argv = ["rlcheck", "preflight", f"--ray-address={ray_address}", f"--hardware={hw.name}", "--no-local-gpus",
            f"--recipe={recipe_id}", "--report-dir=/work/rlcheck-report"]
    container = {"name": "preflight", "image": image, "imagePullPolicy": "IfNotPresent", "command": argv,
                 "workingDir": "/work",
                 "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}],
                 "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"memory": "16Gi"}},
                 "volumeMounts": [{"name": "work", "mountPath": "/work"}]}
    pod = {"restartPolicy": "Never", "automountServiceAccountToken": False,  # it never calls the Kubernetes API
           "nodeSelector": {"kubernetes.io/arch": K8S_ARCH[hw.cpu_arch]},
           "containers": [container], "volumes": [{"name": "work", "emptyDir": {}}]}
    meta = _meta(f"rlcheck-preflight-{hw.name}", labels, namespace)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"backoffLimit": 0, "activeDeadlineSeconds": deadline_s, "ttlSecondsAfterFinished": 86400,
                     "template": {"metadata": {"labels": dict(labels)}, "spec": pod}}}


def node_status_script(hw: HardwareProfile, recipe_id: str, every_s: int, budget_s: float) -> str:
    """The DaemonSet's loop: one `rlcheck k8s apply-node-status` pass, then sleep; a failed pass is retried."""
    argv = ["rlcheck", "k8s", "apply-node-status", "--node", "$NODE_NAME", f"--hardware={hw.name}",
            f"--recipe={recipe_id}", f"--budget-s={budget_s:g}"]
    line = " ".join('"$NODE_NAME"' if a == "$NODE_NAME" else shlex.quote(a) for a in argv)
    return f"while true; do {line}; sleep {every_s}; done"


def _gpu_node_affinity(hw: HardwareProfile) -> dict[str, Any]:
    terms = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(hw.instance_types)},
             {"key": "kubernetes.io/arch", "operator": "In", "values": [K8S_ARCH[hw.cpu_arch]]}]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": terms}]}}}


def node_status_daemonset(hw: HardwareProfile, recipe_id: str, image: str = manifests.DEFAULT_IMAGE,
                          namespace: str = NAMESPACE, every_s: int = 900, budget_s: float = 25.0) -> dict[str, Any]:
    """On every GPU node of the profile's instance types: the quick tier (as `rlcheck slurm prolog` runs it)
    every `every_s`, its verdict applied to the node (through the API with the pod's service account, or kubectl
    where the image has it)."""
    if every_s < 60:
        raise ValueError(f"every_s={every_s}: at least 60 (the tier alone takes up to the budget)")
    labels = _labels("node-status", hw)
    env = [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
           {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
           {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}]  # nvidia-smi, no CUDA work
    container = {"name": "node-status", "image": image, "imagePullPolicy": "IfNotPresent",
                 "command": ["/bin/sh", "-c", node_status_script(hw, recipe_id, every_s, budget_s)], "env": env,
                 "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "8Gi"}},
                 "securityContext": {"allowPrivilegeEscalation": False,
                                     "capabilities": {"add": ["SYSLOG"]}}}  # dmesg under kernel.dmesg_restrict=1
    pod = {"serviceAccountName": NODE_STATUS, "affinity": _gpu_node_affinity(hw),
           "tolerations": [GPU_TOLERATION, OWN_TOLERATION], "containers": [container],
           "terminationGracePeriodSeconds": 10}
    selector = {"app.kubernetes.io/component": "node-status", "rlcheck.io/hardware": hw.name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": _meta(f"{NODE_STATUS}-{hw.name}", labels, namespace),
            "spec": {"selector": {"matchLabels": selector}, "updateStrategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": pod}}}


def node_status_rbac(namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """ServiceAccount, ClusterRole (get and patch nodes, nothing else) and the binding between them."""
    labels = {"app.kubernetes.io/name": "rlcheck", "app.kubernetes.io/component": "node-status"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NODE_STATUS, labels, namespace)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": _meta(NODE_STATUS, labels, None), "rules": RBAC_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta(NODE_STATUS, labels, None),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NODE_STATUS},
         "subjects": [{"kind": "ServiceAccount", "name": NODE_STATUS, "namespace": namespace}]},
    ]


def namespace_doc(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}


def documents(kind: str, hw: HardwareProfile, recipe_id: str, *, image: str = manifests.DEFAULT_IMAGE,
              namespace: str = NAMESPACE, ray_address: str = "", ray_namespace: str = "",
              every_s: int = 900) -> list[dict[str, Any]]:
    """The manifests of one kind, after their Namespace; preflight-daemonset comes with its RBAC (it cannot work
    without it)."""
    if kind == "preflight-job":
        address = ray_address or default_ray_address(recipe_id, hw, ray_namespace or namespace)
        return [namespace_doc(namespace), preflight_job(hw, recipe_id, address, image, namespace)]
    if kind == "preflight-daemonset":
        return [namespace_doc(namespace), *node_status_rbac(namespace),
                node_status_daemonset(hw, recipe_id, image, namespace, every_s)]
    if kind == "rbac":
        return node_status_rbac(namespace)
    raise ValueError(f"kind={kind!r}: one of {', '.join(KINDS)}")
