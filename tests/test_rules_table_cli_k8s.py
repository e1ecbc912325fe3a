"""Rule table for `rlcheck k8s render|apply-node-status` (rlcheck.cli_k8s): each way each command ends, its exit code
(apply-node-status: 0 applied, 1 applied and FAIL, 2 nothing applied; render: 0 written, 2 refused) and its whole
words. kubectl, the Kubernetes API, the quick tier, the clock and the wall time are stand-ins that record what they
were asked (tests/test_k8s.py and tests/test_k8s_api.py run the same paths against a fake kubectl and a loopback API
server): which way is taken (--via auto/kubectl/api, kubectl on PATH or not, a pod or not), the node's taint said as
tainted / untainted / unchanged, the condition's time and namespace, the metrics file written even when the apply
fails, a report that cannot be read or is none, a tier that cannot run (UNKNOWN, never a taint)."""

from __future__ import annotations

import argparse
import datetime
import json
import types
from pathlib import Path

import pytest

from rlcheck import cli_k8s, hardware, option_table, recipes, report
from rlcheck.deploy import k8s_api, k8s_condition, k8s_manifests, k8s_node, levels, manifests, node_metrics, yaml_text
from rlcheck.verdict import Status, Verdict

NODE = "ip-10-1-34-17.ec2.internal"
NOW = datetime.datetime(2026, 12, 3, 12, 0, 5, tzinfo=datetime.UTC)
WALL = 1764763205.0
TAINT = {"key": "rlcheck.io/unhealthy", "value": "gpu_node_health", "effect": "NoSchedule"}
CANARY = "hf_rlcheck_canary_3b8e41"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlcheck")
    cli_k8s.add_k8s(parser.add_subparsers(dest="command"))
    return parser


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    args = _parser().parse_args(["k8s", *argv])
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


FAIL = Verdict(check_id="gpu_node_health", status=Status.FAIL, summary="Xid 79 on GPU 3: fallen off the bus", node=NODE)
WARN = Verdict(check_id="gpu_node_nvlink", status=Status.WARN, summary="NVLink CRC errors", node=NODE)
PASS = Verdict(check_id="gpu_node_ecc", status=Status.PASS, summary="no ECC errors", node=NODE)


def _report(tmp_path: Path, verdicts: list[Verdict]) -> str:
    rows = [report.Recorded(verdict=v, kind="check", test_id=f"checks/test_x.py::test_x[{v.check_id}]")
            for v in verdicts]
    doc = report.build_document(rows, report.decide(rows, "qwen3-4b-colocated", "h200"), {"hardware": "h200"})
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


class Stand:
    """kubectl, the API, the tier, the clocks: what each was asked, and what each answers."""

    def __init__(self, tmp_path: Path) -> None:
        self.calls: list[tuple] = []
        self.taints: list[dict[str, str]] = []
        self.api_steps: list[str] | None = None
        self.fail: Exception | None = None
        self.in_pod: Exception | None = None
        self.tier: list[Verdict] | Exception = [PASS]
        self.kubectl = tmp_path / "bin" / "kubectl"
        self.kubectl.parent.mkdir()
        self.kubectl.write_text("#!/bin/sh\nexit 99\n")
        self.kubectl.chmod(0o755)
        self.cluster = k8s_api.Cluster(base_url="https://10.0.0.1:443", token="t", ca_file="/ca.crt")

    def read_node(self, name, kubectl):
        self.calls.append(("read_node", name, kubectl))
        return {"spec": {"taints": list(self.taints)}}

    def apply(self, patch, kubectl, node):
        self.calls.append(("apply", patch.node, patch.status, kubectl, node))
        if self.fail is not None:
            raise self.fail
        return k8s_node.kubectl_steps(patch, node["spec"]["taints"], kubectl)

    def condition(self, patch, node, status, kubectl):
        self.calls.append(("condition", patch.status, node, status, kubectl))
        return [(kubectl, "patch", "node", patch.node, "--subresource=status"),
                (kubectl, "create", "--namespace", status.namespace)]

    def in_cluster(self):
        self.calls.append(("in_cluster",))
        if self.in_pod is not None:
            raise self.in_pod
        return self.cluster

    def api_apply(self, patch, cluster, *, status=None):
        self.calls.append(("api_apply", patch.status, cluster, status))
        if self.fail is not None:
            raise self.fail
        if self.api_steps is not None:
            return self.api_steps
        changed = k8s_api.taints_after(patch, self.taints) != self.taints
        return ["GET /api/v1/nodes/n", "PATCH /api/v1/nodes/n" + (" (taints)" if changed else "")]

    def judge_here(self, level, hardware_name, recipe_id, budget_s):
        self.calls.append(("judge_here", level, hardware_name, recipe_id, budget_s))
        if isinstance(self.tier, Exception):
            raise self.tier
        return self.tier


def _now(tz=None):
    return NOW if tz is datetime.UTC else NOW.replace(tzinfo=None) - datetime.timedelta(hours=7)


@pytest.fixture
def stand(tmp_path, monkeypatch):
    s = Stand(tmp_path)
    monkeypatch.setattr(k8s_node, "read_node", s.read_node)
    monkeypatch.setattr(k8s_node, "apply", s.apply)
    monkeypatch.setattr(k8s_condition, "kubectl_apply", s.condition)
    monkeypatch.setattr(k8s_api, "in_cluster", s.in_cluster)
    monkeypatch.setattr(k8s_api, "apply", s.api_apply)
    monkeypatch.setattr(levels, "judge_here", s.judge_here)
    monkeypatch.setattr(cli_k8s, "datetime", types.SimpleNamespace(
        datetime=types.SimpleNamespace(now=_now), UTC=datetime.UTC))
    monkeypatch.setattr(cli_k8s, "time", types.SimpleNamespace(time=lambda: WALL))
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    for name in ("HF_TOKEN", "WANDB_API_KEY", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return s


def _status(namespace: str = "rlcheck") -> k8s_condition.NodeStatus:
    return k8s_condition.NodeStatus(now="2026-12-03T12:00:05Z", namespace=namespace)


def test_the_exit_codes():
    assert (cli_k8s.EXIT_APPLIED, cli_k8s.EXIT_APPLIED_FAIL, cli_k8s.EXIT_NOT_APPLIED) == (0, 1, 2)


# --- apply-node-status through kubectl -------------------------------------------------------------------------------

FAIL_LINE = "FAIL gpu_node_health: Xid 79 on GPU 3: fallen off the bus"


@pytest.mark.parametrize(("verdicts", "taints", "code", "said"), [
    ([FAIL, WARN, PASS], [], 1, f"status=fail, tainted; {FAIL_LINE}"),
    ([FAIL, PASS], [TAINT], 1, f"status=fail, taint unchanged; {FAIL_LINE}"),
    ([WARN, PASS], [TAINT], 0, "status=warn, untainted; WARN gpu_node_nvlink: NVLink CRC errors"),
    ([WARN], [], 0, "status=warn, taint unchanged; WARN gpu_node_nvlink: NVLink CRC errors"),
    # nothing but PASS: the summary is its count line alone, which the line then shows
    ([PASS], [TAINT], 0, "status=pass, untainted; rlcheck pass: 0 of 1 blocking verdict(s) not PASS/SKIP"),
    ([PASS], [], 0, "status=pass, taint unchanged; rlcheck pass: 0 of 1 blocking verdict(s) not PASS/SKIP"),
])
def test_kubectl_applies_the_reports_patch_and_says_the_taint(stand, tmp_path, capsys, verdicts, taints, code, said):
    stand.taints = taints
    kubectl = str(stand.kubectl)
    got, out, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, verdicts),
                          "--kubectl", kubectl], capsys)
    assert (got, out) == (code, "")
    assert err == f"rlcheck k8s apply-node-status: {NODE}: rlcheck.io/{said}\n"
    node = {"spec": {"taints": taints}}
    status = {1: "fail", 0: "warn" if WARN in verdicts else "pass"}[code]
    assert stand.calls == [("read_node", NODE, kubectl), ("apply", NODE, status, kubectl, node),
                           ("condition", status, node, _status(), kubectl)]


def test_via_kubectl_with_kubectl_on_path_uses_it(stand, tmp_path, capsys):
    kubectl = str(stand.kubectl)
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [FAIL]), "--kubectl",
                        kubectl, "--via", "kubectl"], capsys)
    assert (got, err) == (1, f"rlcheck k8s apply-node-status: {NODE}: rlcheck.io/status=fail, tainted; {FAIL_LINE}\n")
    assert [c[0] for c in stand.calls] == ["read_node", "apply", "condition"]


def test_kubectl_without_condition_sets_no_condition(stand, tmp_path, capsys):
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [FAIL]),
                        "--kubectl", str(stand.kubectl), "--no-condition"], capsys)
    assert (got, err) == (1, f"rlcheck k8s apply-node-status: {NODE}: rlcheck.io/status=fail, tainted; {FAIL_LINE}\n")
    assert [c[0] for c in stand.calls] == ["read_node", "apply"]


@pytest.mark.parametrize(("flag", "env", "namespace"), [
    ("", "", "rlcheck"), ("", "gpu-ops", "gpu-ops"), ("events-here", "gpu-ops", "events-here"),
    ("events-here", "", "events-here")])
def test_the_conditions_event_namespace(stand, tmp_path, capsys, monkeypatch, flag, env, namespace):
    if env:
        monkeypatch.setenv("POD_NAMESPACE", env)
    argv = ["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [PASS]), "--kubectl",
            str(stand.kubectl)] + (["--event-namespace", flag] if flag else [])
    assert _run(argv, capsys)[0] == 0
    assert stand.calls[-1][3] == _status(namespace)


def test_a_failing_kubectl_applies_nothing_and_exits_2(stand, tmp_path, capsys):
    stand.fail = k8s_node.KubectlFailed("`kubectl taint node n rlcheck.io/unhealthy=x ...` exit code 1: forbidden")
    got, out, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [FAIL]),
                          "--kubectl", str(stand.kubectl)], capsys)
    assert (got, out) == (2, "")
    assert err == (f"rlcheck k8s apply-node-status: not applied to {NODE}: `kubectl taint node n "
                   "rlcheck.io/unhealthy=x ...` exit code 1: forbidden\n")


# --- apply-node-status through the API -------------------------------------------------------------------------------


@pytest.mark.parametrize(("via", "kubectl"), [("auto", "missing"), ("api", "missing"), ("api", "present")])
@pytest.mark.parametrize(("verdicts", "taints", "code", "said"), [
    ([FAIL], [], 1, f"status=fail, tainted; {FAIL_LINE}"),
    ([FAIL], [TAINT], 1, f"status=fail, taint unchanged; {FAIL_LINE}"),
    ([PASS], [TAINT], 0, "status=pass, untainted; rlcheck pass: 0 of 1 blocking verdict(s) not PASS/SKIP"),
    ([WARN], [], 0, "status=warn, taint unchanged; WARN gpu_node_nvlink: NVLink CRC errors"),
])
def test_the_api_applies_when_asked_or_without_kubectl(stand, tmp_path, capsys, via, kubectl, verdicts, taints, code,
                                                       said):
    stand.taints = taints
    path = str(stand.kubectl) if kubectl == "present" else str(tmp_path / "none" / "kubectl")
    got, out, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, verdicts),
                          "--kubectl", path, "--via", via], capsys)
    assert (got, out) == (code, "")
    assert err == f"rlcheck k8s apply-node-status: {NODE}: rlcheck.io/{said}\n"
    status = {1: "fail", 0: "warn" if WARN in verdicts else "pass"}[code]
    assert stand.calls == [("in_cluster",), ("api_apply", status, stand.cluster, _status())]


def test_the_api_without_condition_is_given_no_status(stand, tmp_path, capsys):
    got, _, _ = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [PASS]), "--via", "api",
                      "--no-condition"], capsys)
    assert got == 0 and stand.calls == [("in_cluster",), ("api_apply", "pass", stand.cluster, None)]


def test_only_a_taint_call_counts_as_a_change_of_taint(stand, tmp_path, capsys):
    stand.api_steps = ["GET /api/v1/nodes/n (taints)x", "PATCH /api/v1/nodes/n", "PATCH /status (taints) "]
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [FAIL]), "--via", "api"],
                       capsys)
    assert (got, err) == (1, f"rlcheck k8s apply-node-status: {NODE}: rlcheck.io/status=fail, taint unchanged; "
                             f"{FAIL_LINE}\n")


@pytest.mark.parametrize(("via", "in_pod", "said"), [
    ("kubectl", None, "'{k}' not found on PATH (--via api patches through the pod's service account)"),
    ("kubectl", ValueError("not inside a Kubernetes pod"),
     "'{k}' not found on PATH (--via api patches through the pod's service account)"),
    ("auto", ValueError("not inside a Kubernetes pod: KUBERNETES_SERVICE_HOST unset"),
     "'{k}' not found on PATH, and the API cannot be used: not inside a Kubernetes pod: KUBERNETES_SERVICE_HOST "
     "unset"),
    ("api", ValueError("not inside a Kubernetes pod: KUBERNETES_SERVICE_HOST unset"),
     "not inside a Kubernetes pod: KUBERNETES_SERVICE_HOST unset"),
])
def test_no_way_to_apply_applies_nothing_and_exits_2(stand, tmp_path, capsys, via, in_pod, said):
    stand.in_pod = in_pod
    missing = str(tmp_path / "none" / "kubectl")
    got, out, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [FAIL]),
                          "--kubectl", missing, "--via", via], capsys)
    assert (got, out) == (2, "")
    assert err == f"rlcheck k8s apply-node-status: not applied to {NODE}: {said.format(k=missing)}\n"
    assert all(c[0] == "in_cluster" for c in stand.calls)
    assert len(stand.calls) == (0 if via == "kubectl" else 1)


def test_a_failing_api_applies_nothing_and_exits_2(stand, tmp_path, capsys):
    stand.fail = k8s_api.ApiFailed("PATCH /api/v1/nodes/n: HTTP 403: forbidden\x1b[2J")
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [FAIL]), "--via", "api"],
                       capsys)
    assert (got, err) == (2, f"rlcheck k8s apply-node-status: not applied to {NODE}: PATCH /api/v1/nodes/n: HTTP 403: "
                             "forbidden\\x1b[2J\n")


def test_the_line_escapes_control_characters(stand, tmp_path, capsys):
    odd = Verdict(check_id="gpu_node_health", status=Status.FAIL, summary="bad\x1b]0;owned\x07 GPU", node=NODE)
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [odd]), "--via", "api"],
                       capsys)
    assert (got, err) == (1, f"rlcheck k8s apply-node-status: {NODE}: rlcheck.io/status=fail, tainted; FAIL "
                             "gpu_node_health: bad\\x1b]0;owned\\x07 GPU\n")


# --- the report, the dry run, the quick tier -------------------------------------------------------------------------


def test_dry_run_prints_the_reports_patch_and_applies_nothing(stand, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    leak = Verdict(check_id="gpu_node_health", status=Status.FAIL, summary=f"token {CANARY} refused", node=NODE)
    path = _report(tmp_path, [leak, WARN])
    text = Path(path).read_text(encoding="utf-8")
    got, out, err = _run(["apply-node-status", "--node", NODE, "--report", path, "--dry-run",
                          "--metrics-file", str(tmp_path / "m.prom")], capsys)
    expected = k8s_node.patch_from_report(text, path, NODE, {"HF_TOKEN": CANARY})
    assert (got, err, stand.calls) == (1, "", [])
    assert out == json.dumps(expected.to_dict(), indent=2) + "\n"
    assert CANARY not in out and "<HF_TOKEN redacted>" in out
    assert not (tmp_path / "m.prom").exists()


def test_dry_run_of_a_node_that_is_not_fail_exits_0(stand, tmp_path, capsys):
    got, out, _ = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [WARN]), "--dry-run"],
                       capsys)
    assert got == 0 and json.loads(out)["status"] == "warn"


@pytest.mark.parametrize(("content", "why"), [
    (None, "cannot read it: [Errno 2] No such file or directory: '{p}'"),
    (b"\xff\xfe{", "cannot read it: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
])
def test_an_unreadable_report_applies_nothing(stand, tmp_path, capsys, content, why):
    path = tmp_path / "report.json"
    if content is not None:
        path.write_bytes(content)
    got, out, err = _run(["apply-node-status", "--node", NODE, "--report", str(path)], capsys)
    assert (got, out, stand.calls) == (2, "", [])
    assert err == f"rlcheck k8s apply-node-status: nothing applied: {path}: {why.format(p=path)}\n"


def test_a_file_that_is_no_report_applies_nothing(stand, tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text('{"go": true}', encoding="utf-8")
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", str(path)], capsys)
    with pytest.raises(ValueError) as refused:
        k8s_node.report_verdicts(path.read_text(), str(path), NODE)
    assert (got, stand.calls) == (2, [])
    assert err == f"rlcheck k8s apply-node-status: nothing applied: {refused.value}\n"


def test_the_quick_tier_is_run_with_the_commands_options(stand, capsys):
    stand.tier = [FAIL, PASS]
    got, out, _ = _run(["apply-node-status", "--node", NODE, "--level", "standard", "--hardware", "h200", "--recipe",
                        "qwen3-4b-remote-rm", "--budget-s", "40", "--dry-run"], capsys)
    assert stand.calls == [("judge_here", "standard", "h200", "qwen3-4b-remote-rm", 40.0)]
    expected = k8s_node.node_patch([FAIL, PASS], NODE, "2026-12-03T12:00:05+00:00", {})
    assert (got, out) == (1, json.dumps(expected.to_dict(), indent=2) + "\n")


def test_the_quick_tiers_secrets_are_redacted(stand, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    stand.tier = [Verdict(check_id="image_hf", status=Status.FAIL, summary=f"token {CANARY} refused", node=NODE)]
    got, out, _ = _run(["apply-node-status", "--node", NODE, "--dry-run"], capsys)
    assert got == 1 and CANARY not in out
    assert json.loads(out)["annotations"]["rlcheck.io/summary"].splitlines()[1] == (
        "FAIL image_hf: token <HF_TOKEN redacted> refused")


def test_the_quick_tier_with_its_defaults(stand, capsys):
    got, out, _ = _run(["apply-node-status", "--node", NODE, "--dry-run"], capsys)
    assert stand.calls == [("judge_here", "quick", "auto", "qwen3-4b-colocated", None)]
    assert got == 0 and json.loads(out)["annotations"]["rlcheck.io/checked-at"] == "2026-12-03T12:00:05+00:00"


def test_a_tier_that_cannot_run_is_one_unknown_never_a_taint(stand, capsys):
    stand.tier = RuntimeError("nvidia-smi\n  hung   after\t30 s")
    got, out, _ = _run(["apply-node-status", "--node", NODE, "--dry-run"], capsys)
    unknown = Verdict(check_id="rlcheck_k8s_tier", status=Status.UNKNOWN,
                      summary="could not run the quick tier: nvidia-smi hung after 30 s")
    expected = k8s_node.node_patch([unknown], NODE, "2026-12-03T12:00:05+00:00", {})
    assert (got, out) == (0, json.dumps(expected.to_dict(), indent=2) + "\n")
    assert expected.remove_taints == ("rlcheck.io/unhealthy",) and expected.add_taints == ()


def test_an_empty_node_name_applies_nothing(stand, capsys):
    got, out, err = _run(["apply-node-status", "--node", "", "--dry-run"], capsys)
    assert (got, out) == (2, "")
    assert err == ("rlcheck k8s apply-node-status: nothing applied: node='': the Kubernetes node name (spec.nodeName) "
                   "is required\n")


# --- the metrics file ------------------------------------------------------------------------------------------------


def test_the_metrics_file_is_written_before_the_apply_even_when_it_fails(stand, tmp_path, capsys):
    stand.fail = k8s_api.ApiFailed("GET /api/v1/nodes/n: HTTP 500: down")
    metrics = tmp_path / "rlcheck.prom"
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [FAIL, PASS]),
                        "--via", "api", "--metrics-file", str(metrics)], capsys)
    assert (got, err) == (2, f"rlcheck k8s apply-node-status: not applied to {NODE}: GET /api/v1/nodes/n: HTTP 500: "
                             "down\n")
    assert metrics.read_text(encoding="utf-8") == node_metrics.prometheus_text([FAIL, PASS], "fail", WALL)


@pytest.mark.parametrize(("name", "why"), [
    ("rlcheck.txt", "{m}: node-exporter's textfile collector reads only *.prom files"),
    ("report.json/rlcheck.prom", None),  # under a file: no folder can be made
])
def test_metrics_that_cannot_be_written_are_said_and_the_patch_still_applied(stand, tmp_path, capsys, name, why):
    metrics = tmp_path / name
    got, _, err = _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [WARN]), "--via", "api",
                        "--metrics-file", str(metrics)], capsys)
    first, second = err.splitlines()
    assert got == 0 and [c[0] for c in stand.calls] == ["in_cluster", "api_apply"]
    head = f"rlcheck k8s apply-node-status: metrics not written to {metrics}: "
    if why is not None:
        assert first == head + why.format(m=metrics)
    else:
        assert first == head + f"[Errno 17] File exists: '{metrics.parent}'"
    assert second == f"rlcheck k8s apply-node-status: {NODE}: rlcheck.io/status=warn, taint unchanged; WARN " \
                     "gpu_node_nvlink: NVLink CRC errors"


def test_without_a_metrics_file_none_is_written(stand, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(node_metrics, "write_textfile", lambda *a: pytest.fail("no metrics file was asked for"))
    assert _run(["apply-node-status", "--node", NODE, "--report", _report(tmp_path, [PASS]), "--via", "api"],
                capsys)[0] == 0


# --- render ----------------------------------------------------------------------------------------------------------


def _render(argv: list[str], capsys) -> tuple[int, str, str]:
    return _run(["render", *argv], capsys)


def test_render_json_is_the_list_of_the_documents_asked_for(capsys):
    got, out, err = _render(["--kind", "preflight-daemonset", "--hardware", "h200", "--recipe", "qwen3-4b-remote-rm",
                             "--image", "reg.example/rl:1", "--namespace", "gpu-ops", "--ray-namespace", "ray",
                             "--ray-address", "http://head:8265", "--every-s", "600", "--node-selector", "pool=gpu",
                             "--node-selector", "zone=a", "--instance-types", "--metrics-dir", "/var/lib/ne",
                             "--format", "json"], capsys)
    selection = k8s_manifests.NodeSelection(node_selector={"pool": "gpu", "zone": "a"}, instance_types=True,
                                            metrics_dir="/var/lib/ne")
    docs = k8s_manifests.documents("preflight-daemonset", hardware.get_profile("h200"), "qwen3-4b-remote-rm",
                                   image="reg.example/rl:1", namespace="gpu-ops", ray_address="http://head:8265",
                                   ray_namespace="ray", every_s=600, selection=selection)
    assert (got, err) == (0, "")
    assert out == json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2) + "\n"


def test_render_job_passes_the_ray_address_and_namespace(capsys):
    got, out, _ = _render(["--kind", "preflight-job", "--hardware", "b200", "--recipe", "qwen3-4b-colocated",
                           "--namespace", "gpu-ops", "--ray-namespace", "ray", "--format", "json"], capsys)
    docs = k8s_manifests.documents("preflight-job", hardware.get_profile("b200"), "qwen3-4b-colocated",
                                   namespace="gpu-ops", ray_namespace="ray")
    assert got == 0 and json.loads(out)["items"] == docs


def test_render_job_writes_the_given_ray_address(capsys):
    got, out, _ = _render(["--kind", "preflight-job", "--hardware", "h200", "--ray-address", "http://head.ray:8265",
                           "--format", "json"], capsys)
    docs = k8s_manifests.documents("preflight-job", hardware.get_profile("h200"), "qwen3-4b-colocated",
                                   ray_address="http://head.ray:8265")
    assert got == 0 and json.loads(out)["items"] == docs and "http://head.ray:8265" in out


def test_render_yaml_by_default(capsys):
    got, out, err = _render(["--kind", "rbac", "--hardware", "h200"], capsys)
    docs = k8s_manifests.documents("rbac", hardware.get_profile("h200"), "qwen3-4b-colocated")
    assert (got, out, err) == (0, yaml_text.dump_all(docs), "")


def test_render_yaml_without_pyyaml_says_so(capsys, monkeypatch):
    def missing(docs):
        raise yaml_text.YamlMissing("--format yaml needs PyYAML: pip install 'rlcheck[k8s]', or --format json")
    monkeypatch.setattr(yaml_text, "dump_all", missing)
    assert _render(["--kind", "rbac", "--hardware", "h200"], capsys) == (
        2, "", "rlcheck k8s render: --format yaml needs PyYAML: pip install 'rlcheck[k8s]', or --format json\n")


@pytest.mark.parametrize(("argv", "said"), [
    (["--hardware", "h300"], "unknown hardware 'h300'; valid: {profiles}"),  # noqa: RUF027 - formatted in the test
    (["--hardware", "h200", "--recipe", "qwen9"], "unknown recipe 'qwen9'; valid: {recipes}"),  # noqa: RUF027 - formatted in the test
    (["--hardware", "h200", "--node-selector", "pool"],
     "--node-selector 'pool': key=value (a node label, e.g. nvidia.com/gpu.present=true)"),
    (["--hardware", "h200", "--every-s", "59"], "every_s=59: at least 60 (the tier alone takes up to the budget)"),
    (["--hardware", "h200", "--metrics-dir", "rel\x1b"],
     "metrics_dir='rel\\x1b': an absolute path on the node (node-exporter's textfile directory)"),
])
def test_render_refuses_what_it_cannot_write(capsys, argv, said):
    got, out, err = _render(["--kind", "preflight-daemonset", *argv], capsys)
    profiles, ids = ", ".join(hardware.load_profiles()), ", ".join(recipes.RECIPE_IDS)
    assert (got, out) == (2, "")
    assert err == f"rlcheck k8s render: {said.format(profiles=profiles, recipes=ids)}\n"


def test_render_escapes_control_characters_in_a_refusal(capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise ValueError("image='a\x1b[2Jb': no such image")
    monkeypatch.setattr(k8s_manifests, "documents", refuse)
    assert _render(["--kind", "rbac", "--hardware", "h200"], capsys) == (
        2, "", "rlcheck k8s render: image='a\\x1b[2Jb': no such image\n")


# --- the commands' options -------------------------------------------------------------------------------------------


def _options(p: argparse.ArgumentParser) -> list[tuple]:
    shared = {o.help: "table" for o in (option_table.HARDWARE_PROFILE, option_table.HARDWARE, option_table.RECIPE,
                                        option_table.LEVEL, option_table.BUDGET_S, option_table.RAY_DASHBOARD,
                                        option_table.DRY_RUN_PATCH)}
    return [(tuple(a.option_strings), a.dest, a.metavar, a.default, getattr(a.type, "__name__", a.type),
             tuple(a.choices) if a.choices else None, shared.get(a.help, a.help), a.required, a.nargs)
            for a in p._actions if a.dest != "help"]


def test_the_commands_options_and_help():
    parser = argparse.ArgumentParser(prog="rlcheck")
    sub = parser.add_subparsers(dest="command")
    cli_k8s.add_k8s(sub)
    assert {a.dest: a.help for a in sub._choices_actions} == {
        "k8s": "Kubernetes: render the preflight Job / node-status DaemonSet; apply a node's verdict as label, taint "
               "and annotation"}
    k8s = sub.choices["k8s"]
    (group,) = [a for a in k8s._actions if isinstance(a, argparse._SubParsersAction)]
    assert (group.dest, group.required) == ("k8s_command", True)
    assert type(group.choices["render"]) is type(k8s)
    assert {a.dest: a.help for a in group._choices_actions} == {
        "render": "manifests for a hardware profile, as YAML (kubectl apply -f -) or JSON",
        "apply-node-status": "this node's verdict as label, taint (FAIL) and annotation; exit 0 applied, 1 applied and "
                             "FAIL, 2 nothing applied"}
    assert _options(group.choices["render"]) == [
        (("--kind",), "kind", None, None, None, k8s_manifests.KINDS, None, True, None),
        (("--hardware",), "hardware", "NAME", None, None, None, "table", True, None),
        (("--recipe",), "recipe", "ID", "qwen3-4b-colocated", None, None, "table", False, None),
        (("--image",), "image", None, manifests.DEFAULT_IMAGE, None, None, "an image with rlcheck installed", False,
         None),
        (("--namespace",), "namespace", None, "rlcheck", None, None, None, False, None),
        (("--ray-address",), "ray_address", "URL", "", None, None, "table", False, None),
        (("--ray-namespace",), "ray_namespace", None, "", None, None,
         "preflight-job: the RayCluster's namespace (default: --namespace)", False, None),
        (("--every-s",), "every_s", "S", 900, "int", None, "preflight-daemonset: seconds between passes", False, None),
        (("--node-selector",), "node_selector", "KEY=VALUE", [], None, None,
         "preflight-daemonset: run on nodes with this label (repeatable, all must match) instead of the default: "
         "nvidia.com/gpu.present=true (GPU feature discovery) or GKE's cloud.google.com/gke-accelerator", False, None),
        (("--instance-types",), "instance_types", None, False, None, None,
         "preflight-daemonset: also require one of the profile's instance types (node.kubernetes.io/instance-type)",
         False, 0),
        (("--metrics-dir",), "metrics_dir", "DIR", "", None, None,
         "preflight-daemonset: node-exporter's textfile directory on the node (e.g. /var/lib/node_exporter/textfile): "
         "each pass writes rlcheck.prom there", False, None),
        (("--format",), "format", None, "yaml", None, ("yaml", "json"), None, False, None),
    ]
    assert _options(group.choices["apply-node-status"]) == [
        (("--node",), "node", "NAME", None, None, None, "the Kubernetes node name (spec.nodeName)", True, None),
        (("--report",), "report", "REPORT_JSON", None, "Path", None,
         "a recorded report.json (its verdicts about this machine or naming NAME) instead of running the quick tier",
         False, None),
        (("--hardware",), "hardware", "NAME", "auto", None, None, "table", False, None),
        (("--recipe",), "recipe", "ID", "qwen3-4b-colocated", None, None, "table", False, None),
        (("--level",), "level", None, "quick", None, ("quick", "standard", "long"), "table", False, None),
        (("--budget-s",), "budget_s", "S", None, "float", None, "table", False, None),
        (("--kubectl",), "kubectl", "PATH", "kubectl", None, None, "the kubectl to patch with (default: PATH's)",
         False, None),
        (("--via",), "via", None, "auto", None, ("auto", "kubectl", "api"),
         "how to apply: kubectl, or the Kubernetes API with the pod's service account (no kubectl needed in the "
         "image); auto (default): kubectl when on PATH, else the API", False, None),
        (("--no-condition",), "no_condition", None, False, None, None,
         "set only the label, annotations and taint: no RlcheckHealthy node condition and no Event (for a "
         "ClusterRole without patch on nodes/status and create on events)", False, 0),
        (("--event-namespace",), "event_namespace", "NS", "", None, None,
         "where Events on the node are created (default: $POD_NAMESPACE, else rlcheck)", False, None),
        (("--metrics-file",), "metrics_file", "FILE.prom", None, "Path", None,
         "also write node-health metrics in Prometheus text format here, for node-exporter's textfile collector "
         "(e.g. /var/lib/node_exporter/textfile/rlcheck.prom)", False, None),
        (("--dry-run",), "dry_run", None, False, None, None, "table", False, 0),
    ]
    assert group.choices["render"].get_default("func") is cli_k8s.cmd_render
    assert group.choices["apply-node-status"].get_default("func") is cli_k8s.cmd_apply_node_status
