"""rlcheck's own Kubernetes manifests, per hardware profile: the preflight as a Job against a running RayCluster, and
the quick per-node tier as a DaemonSet on every GPU node (by GPU feature discovery's label on any cloud) that labels,
taints, annotates its node, sets its RlcheckHealthy condition and an Event, with the RBAC it needs and no more.

The DaemonSet requests no `nvidia.com/gpu`: the device plugin would reserve every GPU of the node for it, and it
would never schedule on a node a training job holds. It reads counters only (nvidia-smi, the kernel log), through
NVIDIA_VISIBLE_DEVICES=all as node monitors (dcgm-exporter) do, and CAP_SYSLOG for dmesg.
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import Any

from rlcheck.deploy import k8s_node, manifests
from rlcheck.hardware import HardwareProfile

NAMESPACE = "rlcheck"
NODE_STATUS = "rlcheck-node-status"
KINDS = ("preflight-job", "preflight-daemonset", "rbac")
K8S_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
RBAC_RULES = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
              {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]}]
"""get node (the current taints), patch node (labels, annotations, taints) and patch nodes/status (the RlcheckHealthy
condition, a strategic merge by condition type)."""
EVENT_RULES = [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]
"""A Role in the DaemonSet's namespace: Events on the node are created there, nowhere else."""
GPU_PRESENT: dict[str, Any] = {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
"""NVIDIA GPU feature discovery's label (the GPU Operator runs it on EKS, GKE, AKS, OpenShift and on-prem alike)."""
GKE_ACCELERATOR: dict[str, Any] = {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}
"""GKE's own label on GPU node pools, where GPU feature discovery is not installed."""
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists"}
"""The taint GPU node pools carry (GKE and AKS set nvidia.com/gpu; EKS node groups often do), any value and effect."""
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


def node_status_script(hw: HardwareProfile, recipe_id: str, every_s: int, budget_s: float,
                       extra: list[str] | None = None) -> str:
    """The DaemonSet's loop: one `rlcheck k8s apply-node-status` pass, then sleep; a failed pass is retried."""
    argv = ["rlcheck", "k8s", "apply-node-status", "--node", "$NODE_NAME", f"--hardware={hw.name}",
            f"--recipe={recipe_id}", f"--budget-s={budget_s:g}", *(extra or [])]
    line = " ".join('"$NODE_NAME"' if a == "$NODE_NAME" else shlex.quote(a) for a in argv)
    return f"while true; do {line}; sleep {every_s}; done"


def parse_node_selector(pairs: list[str]) -> dict[str, str]:
    """--node-selector key=value (repeatable) as labels; ValueError naming the malformed one."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or any(c.isspace() for c in pair):
            raise ValueError(f"--node-selector {pair!r}: key=value (a node label, e.g. nvidia.com/gpu.present=true)")
        out[key] = value
    return out


def gpu_node_affinity(hw: HardwareProfile, node_selector: dict[str, str] | None = None,
                      instance_types: bool = False) -> dict[str, Any]:
    """The GPU nodes of the profile's CPU architecture, by what GPU nodes carry on any cloud: GPU feature discovery's
    nvidia.com/gpu.present=true or GKE's accelerator label (either term), or exactly the labels given; narrowed to
    the profile's instance types only when asked (a node of another cloud or on-prem has none of them)."""
    arch = {"key": "kubernetes.io/arch", "operator": "In", "values": [K8S_ARCH[hw.cpu_arch]]}
    terms: list[list[dict[str, Any]]]
    if node_selector:
        terms = [[{"key": k, "operator": "In", "values": [v]} for k, v in node_selector.items()]]
    else:
        terms = [[GPU_PRESENT], [GKE_ACCELERATOR]]
    if instance_types:
        if not hw.instance_types:
            raise ValueError(f"--instance-types: the {hw.name} profile names no instance types")
        types = {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(hw.instance_types)}
        terms = [[*term, types] for term in terms]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [*term, arch]} for term in terms]}}}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeSelection:
    """Which nodes the node-status DaemonSet runs on, and where it writes metrics."""

    node_selector: dict[str, str] = dataclasses.field(default_factory=dict)
    """Node labels that must all match (--node-selector); empty: GPU feature discovery's or GKE's GPU label."""
    instance_types: bool = False
    """Also require one of the profile's instance types (--instance-types)."""
    metrics_dir: str = ""
    """The node's node-exporter textfile directory (--metrics-dir): rlcheck.prom is written there; empty: none."""


def _metrics(selection: NodeSelection) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """(the apply-node-status arguments, the volume mount, the hostPath volume) of --metrics-dir."""
    path = selection.metrics_dir
    if not path.startswith("/"):
        raise ValueError(f"metrics_dir={path!r}: an absolute path on the node (node-exporter's textfile directory)")
    return ([f"--metrics-file={path}/rlcheck.prom"], {"name": "metrics", "mountPath": path},
            {"name": "metrics", "hostPath": {"path": path, "type": "DirectoryOrCreate"}})


def node_status_daemonset(hw: HardwareProfile, recipe_id: str, image: str = manifests.DEFAULT_IMAGE,
                          namespace: str = NAMESPACE, every_s: int = 900, budget_s: float = 25.0,
                          selection: NodeSelection | None = None) -> dict[str, Any]:
    """On every GPU node (see gpu_node_affinity): the quick tier (as `rlcheck slurm prolog` runs it) every
    `every_s`, its verdict applied to the node (through the API with the pod's service account, or kubectl where the
    image has it) as label, annotations, taint, condition and Event; with a metrics_dir, a Prometheus textfile."""
    if every_s < 60:
        raise ValueError(f"every_s={every_s}: at least 60 (the tier alone takes up to the budget)")
    selection = selection or NodeSelection()
    labels = _labels("node-status", hw)
    env = [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
           {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
           {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
           {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}]  # nvidia-smi, no CUDA work
    extra, mounts, volumes = _metrics(selection) if selection.metrics_dir else ([], None, None)
    container = {"name": "node-status", "image": image, "imagePullPolicy": "IfNotPresent",
                 "command": ["/bin/sh", "-c", node_status_script(hw, recipe_id, every_s, budget_s, extra)],
                 "env": env, "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "8Gi"}},
                 "securityContext": {"allowPrivilegeEscalation": False,
                                     "capabilities": {"add": ["SYSLOG"]}}}  # dmesg under kernel.dmesg_restrict=1
    pod: dict[str, Any] = {"serviceAccountName": NODE_STATUS,
                           "affinity": gpu_node_affinity(hw, selection.node_selector, selection.instance_types),
                           "tolerations": [dict(GPU_TOLERATION), dict(OWN_TOLERATION)], "containers": [container],
                           "terminationGracePeriodSeconds": 10}
    if mounts and volumes:
        container["volumeMounts"], pod["volumes"] = [mounts], [volumes]
    selector = {"app.kubernetes.io/component": "node-status", "rlcheck.io/hardware": hw.name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": _meta(f"{NODE_STATUS}-{hw.name}", labels, namespace),
            "spec": {"selector": {"matchLabels": selector}, "updateStrategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": pod}}}


def node_status_rbac(namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """ServiceAccount, ClusterRole (get and patch nodes, patch nodes/status, nothing else) and its binding; a Role
    to create Events in the namespace and its binding."""
    labels = {"app.kubernetes.io/name": "rlcheck", "app.kubernetes.io/component": "node-status"}
    subjects = [{"kind": "ServiceAccount", "name": NODE_STATUS, "namespace": namespace}]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NODE_STATUS, labels, namespace)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": _meta(NODE_STATUS, labels, None), "rules": RBAC_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta(NODE_STATUS, labels, None),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NODE_STATUS},
         "subjects": subjects},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": _meta(f"{NODE_STATUS}-events", labels, namespace), "rules": EVENT_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(f"{NODE_STATUS}-events", labels, namespace),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{NODE_STATUS}-events"},
         "subjects": subjects},
    ]


def namespace_doc(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}


def documents(kind: str, hw: HardwareProfile, recipe_id: str, *, image: str = manifests.DEFAULT_IMAGE,
              namespace: str = NAMESPACE, ray_address: str = "", ray_namespace: str = "",
              every_s: int = 900, selection: NodeSelection | None = None) -> list[dict[str, Any]]:
    """The manifests of one kind, after their Namespace; preflight-daemonset comes with its RBAC (it cannot work
    without it)."""
    if kind == "preflight-job":
        address = ray_address or default_ray_address(recipe_id, hw, ray_namespace or namespace)
        return [namespace_doc(namespace), preflight_job(hw, recipe_id, address, image, namespace)]
    if kind == "preflight-daemonset":
        return [namespace_doc(namespace), *node_status_rbac(namespace),
                node_status_daemonset(hw, recipe_id, image, namespace, every_s, selection=selection)]
    if kind == "rbac":
        return node_status_rbac(namespace)
    raise ValueError(f"kind={kind!r}: one of {', '.join(KINDS)}")
