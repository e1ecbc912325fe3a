"""Validate rendered manifests against the fields Kubernetes and KubeRay define, for the fields we use.

Pod templates are checked against the kubernetes client's own models (attribute maps and types);
KubeRay's CRD fields are listed here from ray-operator/apis/ray/v1 (RayJobSpec, RayClusterSpec,
HeadGroupSpec, WorkerGroupSpec). An unknown key or a wrong type is an error naming its path.
"""

from __future__ import annotations

import re
from typing import Any

from kubernetes.client import models as k8s

RAYJOB_SPEC = {"activeDeadlineSeconds", "backoffLimit", "rayClusterSpec", "submitterPodTemplate", "metadata",
               "clusterSelector", "submitterConfig", "managedBy", "deletionStrategy", "entrypoint", "runtimeEnvYAML",
               "jobId", "submissionMode", "entrypointResources", "entrypointNumCpus", "entrypointNumGpus",
               "ttlSecondsAfterFinished", "preRunningDeadlineSeconds", "shutdownAfterJobFinishes", "suspend"}
RAYCLUSTER_SPEC = {"upgradeStrategy", "authOptions", "suspend", "managedBy", "autoscalerOptions",
                   "headServiceAnnotations", "enableInTreeAutoscaling", "gcsFaultToleranceOptions",
                   "historyServerOptions", "networkPolicy", "tlsOptions", "headGroupSpec", "rayVersion",
                   "workerGroupSpecs"}
HEAD_GROUP = {"template", "headService", "enableIngress", "ingressOptions", "resources", "labels", "rayStartParams",
              "serviceType"}
WORKER_GROUP = {"suspend", "groupName", "replicas", "minReplicas", "maxReplicas", "idleTimeoutSeconds", "priority",
                "resources", "labels", "rayStartParams", "template", "scaleStrategy", "numOfHosts"}
SUBMISSION_MODES = {"K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"}
_PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object}


def check_model(value: Any, type_name: str, path: str) -> list[str]:
    """Errors for value against a kubernetes client model type name such as 'V1PodSpec' or 'list[V1Container]'."""
    if match := re.fullmatch(r"(?:List|list)\[(.+)\]", type_name):
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        return [e for i, item in enumerate(value) for e in check_model(item, match.group(1), f"{path}[{i}]")]
    if match := re.fullmatch(r"(?:Dict\[str, (.+)\]|dict\((?:str|string), (.+)\))", type_name):
        if not isinstance(value, dict):
            return [f"{path}: expected a mapping"]
        inner = match.group(1) or match.group(2)
        return [e for k, v in value.items() for e in check_model(v, inner, f"{path}.{k}")]
    if type_name in _PRIMITIVES:
        ok = isinstance(value, _PRIMITIVES[type_name]) and not (type_name == "int" and isinstance(value, bool))
        return [] if ok else [f"{path}: expected {type_name}, got {type(value).__name__}"]
    model = getattr(k8s, type_name)
    if not isinstance(value, dict):
        return [f"{path}: expected a {type_name} mapping"]
    by_json = {json_name: attr for attr, json_name in model.attribute_map.items()}
    errors = [f"{path}.{key}: not a field of {type_name}" for key in value if key not in by_json]
    for key, item in value.items():
        if key in by_json:
            errors += check_model(item, model.openapi_types[by_json[key]], f"{path}.{key}")
    return errors


def _keys(obj: dict[str, Any], allowed: set[str], path: str) -> list[str]:
    return [f"{path}.{k}: not a KubeRay field (allowed: {', '.join(sorted(allowed))})" for k in obj if k not in allowed]


def check_cluster_spec(spec: dict[str, Any], path: str) -> list[str]:
    errors = _keys(spec, RAYCLUSTER_SPEC, path)
    head = spec.get("headGroupSpec", {})
    errors += _keys(head, HEAD_GROUP, f"{path}.headGroupSpec")
    errors += check_model(head.get("template"), "V1PodTemplateSpec", f"{path}.headGroupSpec.template")
    for i, group in enumerate(spec.get("workerGroupSpecs", [])):
        where = f"{path}.workerGroupSpecs[{i}]"
        errors += _keys(group, WORKER_GROUP, where)
        errors += check_model(group.get("template"), "V1PodTemplateSpec", f"{where}.template")
        counts = [group.get(k) for k in ("minReplicas", "replicas", "maxReplicas")]
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
            errors.append(f"{where}: minReplicas, replicas, maxReplicas must be integers, got {counts}")
        elif not counts[0] <= counts[1] <= counts[2]:
            errors.append(f"{where}: needs minReplicas <= replicas <= maxReplicas, got {counts}")
    return errors


def check_manifest(doc: dict[str, Any]) -> list[str]:
    if doc.get("apiVersion") != "ray.io/v1":
        return [f"apiVersion={doc.get('apiVersion')!r}: expected ray.io/v1"]
    errors = check_model(doc.get("metadata"), "V1ObjectMeta", "metadata")
    if doc.get("kind") == "RayCluster":
        return errors + check_cluster_spec(doc["spec"], "spec")
    if doc.get("kind") == "RayJob":
        spec = doc["spec"]
        errors += _keys(spec, RAYJOB_SPEC, "spec")
        if spec.get("submissionMode") not in SUBMISSION_MODES:
            errors.append(f"spec.submissionMode={spec.get('submissionMode')!r}: one of {sorted(SUBMISSION_MODES)}")
        return errors + check_cluster_spec(spec["rayClusterSpec"], "spec.rayClusterSpec")
    return [f"kind={doc.get('kind')!r}: expected RayCluster or RayJob"]


KUBERNETES_KINDS = {("batch/v1", "Job"): "V1Job", ("apps/v1", "DaemonSet"): "V1DaemonSet",
                    ("v1", "ServiceAccount"): "V1ServiceAccount", ("v1", "Namespace"): "V1Namespace",
                    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "V1ClusterRole",
                    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "V1ClusterRoleBinding",
                    ("rbac.authorization.k8s.io/v1", "Role"): "V1Role",
                    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "V1RoleBinding"}


def check_kubernetes(doc: dict[str, Any]) -> list[str]:
    """Errors for a core Kubernetes object: every key a field of its model (at any depth), every value of the model's
    type, and the client's own deserialization, which refuses a missing required field or a bad enum value."""
    from kubernetes.client import ApiClient

    model = KUBERNETES_KINDS.get((doc.get("apiVersion"), doc.get("kind")))
    if model is None:
        return [f"apiVersion/kind={doc.get('apiVersion')!r}/{doc.get('kind')!r}: not one of {sorted(KUBERNETES_KINDS)}"]
    errors = check_model(doc, model, doc["kind"])
    try:
        ApiClient()._ApiClient__deserialize(doc, model)  # type: ignore[attr-defined]
    except (ValueError, TypeError) as exc:
        errors.append(f"{doc['kind']}: the kubernetes client refuses it: {exc}")
    return errors
