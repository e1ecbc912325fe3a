"""Rule table for rlcheck's own Kubernetes manifests (rlcheck.deploy.k8s_manifests): the whole preflight Job, the
node-status DaemonSet (its loop, the nodes it runs on by every way a selection is given, its metrics volume) and its
RBAC, each kind of `rlcheck k8s render` with its Namespace, and every input refused with the message a user reads."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import hardware
from rlcheck.deploy import k8s_manifests as km
from rlcheck.deploy.k8s_manifests import NodeSelection

H200 = hardware.get_profile("h200")
GB200 = hardware.get_profile("gb200")
RECIPE = "qwen3-4b-colocated"
LABELS = {"app.kubernetes.io/name": "rlcheck", "app.kubernetes.io/component": "node-status",
          "rlcheck.io/hardware": "h200"}


def test_constants_a_user_meets_in_the_manifests():
    assert (km.NAMESPACE, km.NODE_STATUS, km.KINDS) == ("rlcheck", "rlcheck-node-status",
                                                         ("preflight-job", "preflight-daemonset", "rbac"))
    assert km.K8S_ARCH == {"x86_64": "amd64", "aarch64": "arm64"}
    assert km.OWN_TOLERATION == {"key": "rlcheck.io/unhealthy", "operator": "Exists", "effect": "NoSchedule"}
    assert km.GPU_TOLERATION == {"key": "nvidia.com/gpu", "operator": "Exists"}


@pytest.mark.parametrize(("recipe", "hw", "namespace", "address"), [
    (RECIPE, H200, "rlcheck", "http://rlcheck-qwen3-4b-colocated-h200-head-svc.rlcheck.svc:8265"),
    ("qwen3.5-4b", GB200, "ray", "http://rlcheck-qwen3-5-4b-gb200-head-svc.ray.svc:8265"),
])
def test_default_ray_address_is_the_rendered_clusters_head_service(recipe, hw, namespace, address):
    assert km.default_ray_address(recipe, hw, namespace) == address


def _job(hw, address: str, image: str, namespace: str, deadline_s: int) -> dict:
    labels = {"app.kubernetes.io/name": "rlcheck", "app.kubernetes.io/component": "preflight",
              "rlcheck.io/hardware": hw.name}
    argv = ["rlcheck", "preflight", f"--ray-address={address}", f"--hardware={hw.name}", "--no-local-gpus",
            f"--recipe={RECIPE}", "--report-dir=/work/rlcheck-report"]
    container = {"name": "preflight", "image": image, "imagePullPolicy": "IfNotPresent", "command": argv,
                 "workingDir": "/work", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}],
                 "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"memory": "16Gi"}},
                 "volumeMounts": [{"name": "work", "mountPath": "/work"}]}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"rlcheck-preflight-{hw.name}", "labels": labels, "namespace": namespace},
            "spec": {"backoffLimit": 0, "activeDeadlineSeconds": deadline_s, "ttlSecondsAfterFinished": 86400,
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "restartPolicy": "Never", "automountServiceAccountToken": False,
                         "nodeSelector": {"kubernetes.io/arch": km.K8S_ARCH[hw.cpu_arch]},
                         "containers": [container], "volumes": [{"name": "work", "emptyDir": {}}]}}}}


def test_preflight_job_whole_with_its_defaults():
    assert km.preflight_job(H200, RECIPE, "http://h:8265") == _job(H200, "http://h:8265", km.manifests.DEFAULT_IMAGE,
                                                                   "rlcheck", 3600)


def test_preflight_job_whole_as_given_on_arm():
    got = km.preflight_job(GB200, RECIPE, "http://x:1", "img:3", "ns", 60)
    assert got == _job(GB200, "http://x:1", "img:3", "ns", 60)


def test_preflight_job_labels_are_copies_not_one_shared_object():
    got = km.preflight_job(H200, RECIPE, "a")
    assert got["metadata"]["labels"] is not got["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize(("every_s", "budget_s", "extra", "script"), [
    (900, 25.0, None, 'while true; do rlcheck k8s apply-node-status --node "$NODE_NAME" --hardware=h200 '
                      "--recipe=qwen3-4b-colocated --budget-s=25; sleep 900; done"),
    (60, 2.5, ["--metrics-file=/var/my dir/rlcheck.prom"],
     'while true; do rlcheck k8s apply-node-status --node "$NODE_NAME" --hardware=h200 --recipe=qwen3-4b-colocated '
     "--budget-s=2.5 '--metrics-file=/var/my dir/rlcheck.prom'; sleep 60; done"),
    (120, 1e-05, [], 'while true; do rlcheck k8s apply-node-status --node "$NODE_NAME" --hardware=h200 '
                     "--recipe=qwen3-4b-colocated --budget-s=1e-05; sleep 120; done"),
])
def test_node_status_script_is_the_loop_with_each_argument_quoted(every_s, budget_s, extra, script):
    assert km.node_status_script(H200, RECIPE, every_s, budget_s, extra) == script


@pytest.mark.parametrize(("pairs", "labels"), [
    ([], {}), (["nvidia.com/gpu.present=true"], {"nvidia.com/gpu.present": "true"}),
    (["a=1", "b="], {"a": "1", "b": ""}), (["a=x=y"], {"a": "x=y"}), (["a=1", "a=2"], {"a": "2"}),
])
def test_parse_node_selector_reads_each_pair(pairs, labels):
    assert km.parse_node_selector(pairs) == labels


@pytest.mark.parametrize("pair", ["novalue", "=v", " =v", "a =v", "a= v", "a=b c", "a=\tb", ""])
def test_parse_node_selector_refuses_a_malformed_pair(pair):
    with pytest.raises(ValueError) as raised:
        km.parse_node_selector(["ok=1", pair])
    assert str(raised.value) == (f"--node-selector {pair!r}: key=value (a node label, e.g. "
                                 "nvidia.com/gpu.present=true)")


def _affinity(*terms: list) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]}}}


AMD64 = {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
H200_TYPES = {"key": "node.kubernetes.io/instance-type", "operator": "In",
              "values": ["p5en.48xlarge", "ml.p5en.48xlarge"]}


@pytest.mark.parametrize(("selector", "types", "affinity"), [
    (None, False, _affinity([km.GPU_PRESENT, AMD64], [km.GKE_ACCELERATOR, AMD64])),
    ({}, False, _affinity([km.GPU_PRESENT, AMD64], [km.GKE_ACCELERATOR, AMD64])),
    (None, True, _affinity([km.GPU_PRESENT, H200_TYPES, AMD64], [km.GKE_ACCELERATOR, H200_TYPES, AMD64])),
    ({"pool": "gpu", "zone": "a"}, False,
     _affinity([{"key": "pool", "operator": "In", "values": ["gpu"]},
                {"key": "zone", "operator": "In", "values": ["a"]}, AMD64])),
    ({"pool": "gpu"}, True, _affinity([{"key": "pool", "operator": "In", "values": ["gpu"]}, H200_TYPES, AMD64])),
])
def test_gpu_node_affinity_by_each_way_of_choosing_nodes(selector, types, affinity):
    assert km.gpu_node_affinity(H200, selector, types) == affinity


def test_gpu_node_affinity_arm_profile_and_defaults():
    arm = {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}
    assert km.gpu_node_affinity(GB200) == _affinity([km.GPU_PRESENT, arm], [km.GKE_ACCELERATOR, arm])


def test_gpu_node_affinity_instance_types_of_a_profile_without_any_refused():
    bare = dataclasses.replace(H200, instance_types=())
    assert km.gpu_node_affinity(bare) == _affinity([km.GPU_PRESENT, AMD64], [km.GKE_ACCELERATOR, AMD64])
    with pytest.raises(ValueError) as raised:
        km.gpu_node_affinity(bare, None, True)
    assert str(raised.value) == "--instance-types: the h200 profile names no instance types"


def test_node_selection_defaults():
    assert NodeSelection() == NodeSelection(node_selector={}, instance_types=False, metrics_dir="")


def _daemonset(every_s: int = 900, budget: str = "25", namespace: str = "rlcheck", image: str = "",
               affinity: dict | None = None, metrics: str = "") -> dict:
    extra = f" --metrics-file={metrics}/rlcheck.prom" if metrics else ""
    container = {"name": "node-status", "image": image or km.manifests.DEFAULT_IMAGE,
                 "imagePullPolicy": "IfNotPresent",
                 "command": ["/bin/sh", "-c", 'while true; do rlcheck k8s apply-node-status --node "$NODE_NAME" '
                             f"--hardware=h200 --recipe={RECIPE} --budget-s={budget}{extra}; sleep {every_s}; done"],
                 "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                         {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                         {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                         {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}],
                 "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "8Gi"}},
                 "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"add": ["SYSLOG"]}}}
    pod = {"serviceAccountName": "rlcheck-node-status",
           "affinity": affinity or _affinity([km.GPU_PRESENT, AMD64], [km.GKE_ACCELERATOR, AMD64]),
           "tolerations": [km.GPU_TOLERATION, km.OWN_TOLERATION], "containers": [container],
           "terminationGracePeriodSeconds": 10}
    if metrics:
        container["volumeMounts"] = [{"name": "metrics", "mountPath": metrics}]
        pod["volumes"] = [{"name": "metrics", "hostPath": {"path": metrics, "type": "DirectoryOrCreate"}}]
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "rlcheck-node-status-h200", "labels": LABELS, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app.kubernetes.io/component": "node-status",
                                                  "rlcheck.io/hardware": "h200"}},
                     "updateStrategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": LABELS}, "spec": pod}}}


def test_node_status_daemonset_whole_with_its_defaults():
    assert km.node_status_daemonset(H200, RECIPE) == _daemonset()


def test_node_status_daemonset_whole_as_given_with_metrics_and_a_selection():
    selection = NodeSelection(node_selector={"pool": "gpu"}, instance_types=True, metrics_dir="/var/lib/ne")
    got = km.node_status_daemonset(H200, RECIPE, "img:4", "ops", 60, 2.5, selection)
    affinity = _affinity([{"key": "pool", "operator": "In", "values": ["gpu"]}, H200_TYPES, AMD64])
    assert got == _daemonset(60, "2.5", "ops", "img:4", affinity, "/var/lib/ne")


def test_node_status_daemonset_labels_and_tolerations_are_copies():
    got = km.node_status_daemonset(H200, RECIPE)
    assert got["metadata"]["labels"] is not got["spec"]["template"]["metadata"]["labels"]
    pod = got["spec"]["template"]["spec"]
    assert pod["tolerations"][0] is not km.GPU_TOLERATION and pod["tolerations"][1] is not km.OWN_TOLERATION


@pytest.mark.parametrize(("every_s", "refused"), [(59, True), (60, False), (0, True), (-900, True)])
def test_node_status_daemonset_a_pass_at_least_every_minute(every_s, refused):
    if not refused:
        assert km.node_status_daemonset(H200, RECIPE, every_s=every_s) == _daemonset(every_s)
        return
    with pytest.raises(ValueError) as raised:
        km.node_status_daemonset(H200, RECIPE, every_s=every_s)
    assert str(raised.value) == f"every_s={every_s}: at least 60 (the tier alone takes up to the budget)"


@pytest.mark.parametrize("path", ["var/lib/ne", "./ne", "~/ne"])
def test_node_status_daemonset_metrics_dir_must_be_absolute(path):
    with pytest.raises(ValueError) as raised:
        km.node_status_daemonset(H200, RECIPE, selection=NodeSelection(metrics_dir=path))
    assert str(raised.value) == (f"metrics_dir={path!r}: an absolute path on the node (node-exporter's textfile "
                                 "directory)")


def _rbac(namespace: str) -> list[dict]:
    labels = {"app.kubernetes.io/name": "rlcheck", "app.kubernetes.io/component": "node-status"}
    subjects = [{"kind": "ServiceAccount", "name": "rlcheck-node-status", "namespace": namespace}]
    name = {"name": "rlcheck-node-status", "labels": labels}
    events = {"name": "rlcheck-node-status-events", "labels": labels, "namespace": namespace}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {**name, "namespace": namespace}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": name,
         "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
                   {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": name,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "rlcheck-node-status"},
         "subjects": subjects},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": events,
         "rules": [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": events,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "rlcheck-node-status-events"},
         "subjects": subjects}]


@pytest.mark.parametrize("namespace", [None, "ops"])
def test_node_status_rbac_whole(namespace):
    got = km.node_status_rbac() if namespace is None else km.node_status_rbac(namespace)
    assert got == _rbac(namespace or "rlcheck")


def _ns(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


@pytest.mark.parametrize(("kw", "address", "namespace"), [
    ({}, "http://rlcheck-qwen3-4b-colocated-h200-head-svc.rlcheck.svc:8265", "rlcheck"),
    ({"namespace": "ops"}, "http://rlcheck-qwen3-4b-colocated-h200-head-svc.ops.svc:8265", "ops"),
    ({"namespace": "ops", "ray_namespace": "ray"}, "http://rlcheck-qwen3-4b-colocated-h200-head-svc.ray.svc:8265",
     "ops"),
    ({"ray_address": "http://given:8265", "ray_namespace": "ray"}, "http://given:8265", "rlcheck"),
])
def test_documents_preflight_job_after_its_namespace(kw, address, namespace):
    got = km.documents("preflight-job", H200, RECIPE, image="img:5", **kw)
    assert got == [_ns(namespace), _job(H200, address, "img:5", namespace, 3600)]


def test_documents_daemonset_with_its_rbac_after_its_namespace():
    selection = NodeSelection(metrics_dir="/m")
    got = km.documents("preflight-daemonset", H200, RECIPE, namespace="ops", every_s=300, selection=selection)
    assert got == [_ns("ops"), *_rbac("ops"), _daemonset(300, namespace="ops", metrics="/m")]
    assert km.documents("preflight-daemonset", H200, RECIPE)[-1] == _daemonset()


def test_documents_rbac_alone_and_an_unknown_kind_refused():
    assert km.documents("rbac", H200, RECIPE, namespace="ops") == _rbac("ops")
    assert km.documents("rbac", H200, RECIPE) == _rbac("rlcheck")
    with pytest.raises(ValueError) as raised:
        km.documents("job", H200, RECIPE)
    assert str(raised.value) == "kind='job': one of preflight-job, preflight-daemonset, rbac"
