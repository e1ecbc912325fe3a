"""`rlcheck k8s render|apply-node-status`: rlcheck's Kubernetes manifests per hardware profile, and a node's verdict
applied to it as a label, a taint on FAIL and an annotation with the reasons, through kubectl.

apply-node-status exits 0: applied, the node is pass / warn / unknown; 1: applied, the node is FAIL (tainted);
2: nothing applied: a report that is not an rlcheck report.json, a usage error, kubectl missing, failing or timing out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from rlcheck import hardware, option_table, secret_guard
from rlcheck.scan_output import safe
from rlcheck.verdict import Status, Verdict

EXIT_APPLIED, EXIT_APPLIED_FAIL, EXIT_NOT_APPLIED = 0, 1, 2


def cmd_render(args: argparse.Namespace) -> int:
    from rlcheck import recipes
    from rlcheck.deploy import k8s_manifests, yaml_text

    profiles = hardware.load_profiles()
    if args.hardware not in profiles:
        print(f"rlcheck k8s render: unknown hardware {args.hardware!r}; valid: {', '.join(profiles)}", file=sys.stderr)
        return EXIT_NOT_APPLIED
    if args.recipe not in recipes.RECIPE_IDS:
        print(f"rlcheck k8s render: unknown recipe {args.recipe!r}; valid: {', '.join(recipes.RECIPE_IDS)}",
              file=sys.stderr)
        return EXIT_NOT_APPLIED
    try:
        selection = k8s_manifests.NodeSelection(node_selector=k8s_manifests.parse_node_selector(args.node_selector),
                                                instance_types=args.instance_types, metrics_dir=args.metrics_dir)
        docs = k8s_manifests.documents(args.kind, profiles[args.hardware], args.recipe, image=args.image,
                                       namespace=args.namespace, ray_address=args.ray_address,
                                       ray_namespace=args.ray_namespace, every_s=args.every_s, selection=selection)
    except ValueError as exc:
        print(safe(f"rlcheck k8s render: {exc}"), file=sys.stderr)
        return EXIT_NOT_APPLIED
    if args.format == "json":
        sys.stdout.write(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2) + "\n")
    else:
        try:
            sys.stdout.write(yaml_text.dump_all(docs))
        except yaml_text.YamlMissing as exc:
            print(f"rlcheck k8s render: {exc}", file=sys.stderr)
            return EXIT_NOT_APPLIED
    return EXIT_APPLIED


def _judge_here(args: argparse.Namespace) -> tuple[list[Verdict], str]:
    """The quick tier on this machine (all its verdicts are this node's); rlcheck failing is one UNKNOWN."""
    from rlcheck.deploy import levels

    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    try:
        return levels.judge_here(args.level, args.hardware, args.recipe, args.budget_s), now
    except Exception as exc:  # rlcheck itself broken: the node is unknown, never tainted for it
        return [Verdict(check_id="rlcheck_k8s_tier", status=Status.UNKNOWN,
                        summary=f"could not run the quick tier: {' '.join(str(exc).split())}")], now


def _status(args: argparse.Namespace) -> Any:
    """The condition's and the Event's time and namespace (None: --no-condition)."""
    from rlcheck.deploy import k8s_condition

    if args.no_condition:
        return None
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    namespace = args.event_namespace or os.environ.get("POD_NAMESPACE") or "rlcheck"
    return k8s_condition.NodeStatus(now=now, namespace=namespace)


def _apply(patch: Any, args: argparse.Namespace) -> tuple[str, list[Any]]:
    """Apply with kubectl (--via kubectl, or auto and kubectl on PATH) or the API with the pod's service account
    (--via api, or auto without kubectl); ValueError when neither can be used, naming both. The label, annotations
    and taint first, then (unless --no-condition) the RlcheckHealthy condition and, on a change, an Event."""
    from rlcheck.deploy import k8s_api, k8s_condition, k8s_node

    status = _status(args)
    kubectl = shutil.which(args.kubectl) if args.via in ("auto", "kubectl") else None
    if kubectl is not None:
        node = k8s_node.read_node(patch.node, kubectl)
        steps = list(k8s_node.apply(patch, kubectl, node=node))
        return "kubectl", steps + (k8s_condition.kubectl_apply(patch, node, status, kubectl) if status else [])
    if args.via == "kubectl":
        raise ValueError(f"{args.kubectl!r} not found on PATH (--via api patches through the pod's service account)")
    try:
        cluster = k8s_api.in_cluster()
    except ValueError as exc:
        if args.via == "api":
            raise
        raise ValueError(f"{args.kubectl!r} not found on PATH, and the API cannot be used: {exc}") from exc
    return "api", k8s_api.apply(patch, cluster, status=status)


def _write_metrics(args: argparse.Namespace, verdicts: list[Verdict], status: str) -> str:
    """The Prometheus textfile (--metrics-file); a line to say when it could not be written (never fatal)."""
    from rlcheck.deploy import node_metrics

    if args.metrics_file is None:
        return ""
    try:
        node_metrics.write_textfile(args.metrics_file, node_metrics.prometheus_text(verdicts, status, time.time()))
    except (OSError, ValueError) as exc:
        return f"rlcheck k8s apply-node-status: metrics not written to {args.metrics_file}: {exc}"
    return ""


def cmd_apply_node_status(args: argparse.Namespace) -> int:
    from rlcheck.deploy import k8s_node

    secrets = secret_guard.secret_values(os.environ)
    try:
        if args.report is not None:
            try:
                text = args.report.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"{args.report}: cannot read it: {exc}") from exc
            verdicts = k8s_node.report_verdicts(text, str(args.report), args.node)
            patch = k8s_node.patch_from_report(text, str(args.report), args.node, secrets)
        else:
            verdicts, now = _judge_here(args)
            patch = k8s_node.node_patch(verdicts, args.node, now, secrets)
    except ValueError as exc:
        print(safe(f"rlcheck k8s apply-node-status: nothing applied: {exc}"), file=sys.stderr)
        return EXIT_NOT_APPLIED
    if args.dry_run:
        print(json.dumps(patch.to_dict(), indent=2))
        return EXIT_APPLIED_FAIL if patch.status == "fail" else EXIT_APPLIED
    if problem := _write_metrics(args, verdicts, patch.status):  # the node's health is known even if the API fails
        print(safe(problem), file=sys.stderr)
    try:
        how, steps = _apply(patch, args)
    except (ValueError, RuntimeError) as exc:  # k8s_node.KubectlFailed, k8s_api.ApiFailed, or no way to apply
        print(safe(f"rlcheck k8s apply-node-status: not applied to {args.node}: {exc}"), file=sys.stderr)
        return EXIT_NOT_APPLIED
    changed = any(s[1] == "taint" for s in steps) if how == "kubectl" else any(s.endswith("(taints)") for s in steps)
    taint = ("tainted" if patch.add_taints else "untainted") if changed else "taint unchanged"
    first = patch.annotations[k8s_node.SUMMARY_ANNOTATION].splitlines()
    print(safe(f"rlcheck k8s apply-node-status: {args.node}: {k8s_node.STATUS_LABEL}={patch.status}, {taint}; "
               f"{first[1] if len(first) > 1 else first[0]}"), file=sys.stderr)
    return EXIT_APPLIED_FAIL if patch.status == "fail" else EXIT_APPLIED


def add_k8s(sub: argparse._SubParsersAction) -> None:
    from rlcheck.deploy import k8s_manifests, manifests

    p = sub.add_parser("k8s", help="Kubernetes: render the preflight Job / node-status DaemonSet; apply a node's "
                                   "verdict as label, taint and annotation")
    k8s = p.add_subparsers(dest="k8s_command", required=True, parser_class=type(p))
    r = k8s.add_parser("render", help="manifests for a hardware profile, as YAML (kubectl apply -f -) or JSON")
    r.add_argument("--kind", required=True, choices=k8s_manifests.KINDS)
    option_table.add(r, option_table.HARDWARE_PROFILE, option_table.RECIPE)
    r.add_argument("--image", default=manifests.DEFAULT_IMAGE, help="an image with rlcheck installed")
    r.add_argument("--namespace", default=k8s_manifests.NAMESPACE)
    option_table.add(r, option_table.RAY_DASHBOARD)
    r.add_argument("--ray-namespace", default="", help="preflight-job: the RayCluster's namespace (default: "
                                                        "--namespace)")
    r.add_argument("--every-s", type=int, default=900, metavar="S", help="preflight-daemonset: seconds between passes")
    r.add_argument("--node-selector", action="append", default=[], metavar="KEY=VALUE",
                   help="preflight-daemonset: run on nodes with this label (repeatable, all must match) instead of "
                        "the default: nvidia.com/gpu.present=true (GPU feature discovery) or GKE's "
                        "cloud.google.com/gke-accelerator")
    r.add_argument("--instance-types", action="store_true",
                   help="preflight-daemonset: also require one of the profile's instance types "
                        "(node.kubernetes.io/instance-type)")
    r.add_argument("--metrics-dir", default="", metavar="DIR",
                   help="preflight-daemonset: node-exporter's textfile directory on the node (e.g. "
                        "/var/lib/node_exporter/textfile): each pass writes rlcheck.prom there")
    r.add_argument("--format", default="yaml", choices=("yaml", "json"))
    r.set_defaults(func=cmd_render)
    a = k8s.add_parser("apply-node-status", help="this node's verdict as label, taint (FAIL) and annotation; exit 0 "
                                                 "applied, 1 applied and FAIL, 2 nothing applied")
    a.add_argument("--node", required=True, metavar="NAME", help="the Kubernetes node name (spec.nodeName)")
    a.add_argument("--report", type=Path, metavar="REPORT_JSON",
                   help="a recorded report.json (its verdicts about this machine or naming NAME) instead of running "
                        "the quick tier")
    option_table.add(a, option_table.HARDWARE, option_table.RECIPE, option_table.LEVEL, option_table.BUDGET_S)
    a.add_argument("--kubectl", default="kubectl", metavar="PATH", help="the kubectl to patch with (default: PATH's)")
    a.add_argument("--via", default="auto", choices=("auto", "kubectl", "api"),
                   help="how to apply: kubectl, or the Kubernetes API with the pod's service account (no kubectl "
                        "needed in the image); auto (default): kubectl when on PATH, else the API")
    a.add_argument("--no-condition", action="store_true",
                   help="set only the label, annotations and taint: no RlcheckHealthy node condition and no Event "
                        "(for a ClusterRole without patch on nodes/status and create on events)")
    a.add_argument("--event-namespace", default="", metavar="NS",
                   help="where Events on the node are created (default: $POD_NAMESPACE, else rlcheck)")
    a.add_argument("--metrics-file", type=Path, metavar="FILE.prom",
                   help="also write node-health metrics in Prometheus text format here, for node-exporter's "
                        "textfile collector (e.g. /var/lib/node_exporter/textfile/rlcheck.prom)")
    option_table.add(a, option_table.DRY_RUN_PATCH)
    a.set_defaults(func=cmd_apply_node_status)
