"""`rlcheck k8s`: the preflight Job and node-status DaemonSet schema-checked for every hardware profile, the RBAC
exactly get/patch on nodes, a node's label / taint / annotation patch from recorded reports, and the
apply-node-status command run against a fake kubectl on PATH."""

from __future__ import annotations

import dataclasses
import json
import shutil
import socket
import subprocess

import pytest
import yaml

from rlcheck import preflight, report
from rlcheck.cli import main
from rlcheck.deploy import k8s_manifests, k8s_node
from rlcheck.hardware import get_profile, load_profiles
from rlcheck.preflight import gate
from rlcheck.verdict import Status, Verdict
from tests.gpu_health_recordings import node, reading
from tests.kuberay_schema import check_kubernetes
from tests.registry_cases_inventory import DECLARED
from tests.registry_cases_inventory import inventory as inventory_reading

PROFILES = sorted(load_profiles())
HEALTH = preflight.get("gpu_node_health")
INPUTS = gate.inputs_for("qwen3-4b-colocated", get_profile("h200"))
NODE = "ip-10-1-34-17.ec2.internal"
CANARY = "hf_rlcheck_canary_9c1e77"


def _this_machine(obs):
    """A recording read as `gpu_node_health` reads the machine it runs on (collect_this_node's facts: named by this
    machine's host name, where the report says it ran)."""
    facts, observation = obs
    return dataclasses.replace(facts, node_id="this-machine", hostname=socket.gethostname(), name=""), observation


def _health(**recording) -> list[Verdict]:
    return HEALTH.run(INPUTS, observation=_this_machine(node(reading(**recording))))


IMAGE_FAIL = Verdict(check_id="image_numpy_abi", status=Status.FAIL, failure_id="numpy2-megatron",
                     summary="numpy 2.1.0 installed; Megatron's checkpoint loader needs numpy<2")
OTHER_NODE = Verdict(check_id="cluster_node_gpus", status=Status.FAIL, node="6f1c0a3be2d94c7e8b1f4a0d9c2e7b5a",
                     summary="worker slime-worker-gpu-3: 7 of 8 GPUs visible to Ray")
RECORDINGS = {
    "pass": lambda: _health(),
    "warn": lambda: _health(nvlink="nvlink_e_crc_only.txt"),
    "fail-two-checks": lambda: [*_health(smi="h200_2gpu_dbe_remap_pending_hw_slowdown_q.txt", log="dmesg_xid.txt"),
                                IMAGE_FAIL],
    "unknown": lambda: [*_health(), Verdict(check_id="image_tms_preload", status=Status.UNKNOWN,
                                            summary="not judged within the 25 s budget of the Slurm tier")],
    "other-node-fails": lambda: [*_health(), OTHER_NODE],
    "skip-only": lambda: [Verdict(check_id="gpu_node_health", status=Status.SKIP, summary="needs a CUDA GPU: none")],
}


def _report_text(verdicts: list[Verdict]) -> str:
    rows = [report.Recorded(verdict=v, kind="check", test_id=f"checks/test_x.py::test_x[{v.check_id}]")
            for v in verdicts]
    doc = report.build_document(rows, report.decide(rows, "qwen3-4b-colocated", "h200"), {"hardware": "h200"})
    return json.dumps(doc)


# --- manifests -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", k8s_manifests.KINDS)
@pytest.mark.parametrize("hw", PROFILES)
def test_k8s_manifests_match_the_kubernetes_api_models(kind, hw):
    for doc in k8s_manifests.documents(kind, get_profile(hw), "qwen3-4b-colocated"):
        assert check_kubernetes(yaml.safe_load(yaml.safe_dump(doc))) == [], doc["kind"]


def test_k8s_schema_check_catches_a_wrong_field_and_a_missing_required_one():
    ds = k8s_manifests.node_status_daemonset(get_profile("h200"), "qwen3-4b-colocated")
    ds["spec"]["template"]["spec"]["containers"][0]["gpus"] = "all"
    ds["spec"]["template"]["spec"]["tolerations"][0]["tolerationSeconds"] = "60"
    errors = check_kubernetes(ds)
    assert any("containers[0].gpus: not a field of V1Container" in e for e in errors)
    assert any("tolerations[0].tolerationSeconds: expected int, got str" in e for e in errors)
    binding = k8s_manifests.node_status_rbac()[2]
    del binding["roleRef"]
    assert any("refuses it" in e and "roleRef" in e for e in check_kubernetes(binding))


def test_k8s_rbac_is_nodes_get_patch_status_patch_and_events_create_in_its_namespace_only():
    sa, role, binding, events, events_binding = k8s_manifests.node_status_rbac("gpu-ops")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
                             {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]}]
    assert (events["kind"], events["metadata"]["namespace"]) == ("Role", "gpu-ops")
    assert events["rules"] == [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]
    assert events_binding["roleRef"]["name"] == events["metadata"]["name"]
    assert events_binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                           "namespace": "gpu-ops"}]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": role["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": "gpu-ops"}]
    job = k8s_manifests.preflight_job(get_profile("h200"), "qwen3-4b-colocated", "http://head:8265")
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is False  # the Job needs no API


@pytest.mark.parametrize("hw", PROFILES)
def test_k8s_daemonset_runs_the_quick_tier_on_the_profiles_gpu_nodes(hw):
    profile = get_profile(hw)
    pod = k8s_manifests.node_status_daemonset(profile, "qwen3-4b-colocated")["spec"]["template"]["spec"]
    gfd, gke = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    arch = {"key": "kubernetes.io/arch", "operator": "In", "values": [k8s_manifests.K8S_ARCH[profile.cpu_arch]]}
    assert gfd["matchExpressions"] == [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}, arch]
    assert gke["matchExpressions"] == [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}, arch]
    assert "instance-type" not in json.dumps(pod["affinity"])  # any cloud, on-prem too: no instance types by default
    assert {"key": "rlcheck.io/unhealthy", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists"} in pod["tolerations"]  # any value, any effect
    (container,) = pod["containers"]
    assert "nvidia.com/gpu" not in json.dumps(container["resources"])  # reserves no GPU of the node
    assert {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} in container["env"]
    script = container["command"][2]
    assert f'apply-node-status --node "$NODE_NAME" --hardware={hw} ' in script
    sh = shutil.which("sh") or "/bin/sh"
    assert subprocess.run([sh, "-n", "-c", script], capture_output=True, timeout=30).returncode == 0


def test_k8s_job_runs_the_packaged_preflight_against_the_head_service():
    _, job = k8s_manifests.documents("preflight-job", get_profile("b300"), "qwen3-30b-a3b-disaggregated",
                                     ray_namespace="ray")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["command"][:3] == [
        "rlcheck", "preflight", "--ray-address=http://rlcheck-qwen3-30b-a3b-disaggregated-b300-head-svc.ray.svc:8265"]
    assert "--hardware=b300" in container["command"] and job["spec"]["backoffLimit"] == 0
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/arch": "amd64"}
    _, gb300 = k8s_manifests.documents("preflight-job", get_profile("gb300"), "glm5.2-gb300", ray_address="http://x:1")
    assert gb300["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/arch": "arm64"}


def test_k8s_daemonset_refuses_a_pass_every_few_seconds():
    with pytest.raises(ValueError, match="every_s=10: at least 60"):
        k8s_manifests.node_status_daemonset(get_profile("h200"), "qwen3-4b-colocated", every_s=10)


def test_k8s_render_cli_yaml_and_json(capsys):
    assert main(["k8s", "render", "--kind", "preflight-daemonset", "--hardware", "h200"]) == 0
    kinds = [d["kind"] for d in yaml.safe_load_all(capsys.readouterr().out)]
    assert kinds == ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                     "DaemonSet"]
    assert main(["k8s", "render", "--kind", "preflight-job", "--hardware", "b200", "--format", "json"]) == 0
    assert [d["kind"] for d in json.loads(capsys.readouterr().out)["items"]] == ["Namespace", "Job"]
    assert main(["k8s", "render", "--kind", "rbac", "--hardware", "h300"]) == 2
    assert "unknown hardware 'h300'; valid: b200" in capsys.readouterr().err


# --- the node patch from recorded reports ---------------------------------------------------------------------

@pytest.mark.parametrize(("recording", "status", "taint_value", "summary_lines"), [
    ("pass", "pass", None, ["rlcheck pass: 0 of 7 blocking verdict(s) not PASS/SKIP"]),
    ("warn", "warn", None, ["rlcheck warn: 1 of 7 blocking verdict(s) not PASS/SKIP", "WARN gpu_node_health: "]),
    ("fail-two-checks", "fail", "gpu_node_health",
     ["rlcheck fail: 5 of 8 blocking verdict(s) not PASS/SKIP", "FAIL gpu_node_health: worker ",
      "FAIL image_numpy_abi: numpy 2.1.0 installed; Megatron's checkpoint loader needs numpy<2"]),
    ("unknown", "unknown", None, ["rlcheck unknown: 1 of 8 blocking verdict(s) not PASS/SKIP",
                                  "UNKNOWN image_tms_preload: not judged within the 25 s budget"]),
    ("other-node-fails", "pass", None, ["rlcheck pass: 0 of 7 blocking verdict(s) not PASS/SKIP"]),
    ("skip-only", "unknown", None, ["rlcheck unknown: 0 of 1 blocking verdict(s) not PASS/SKIP"]),
])
def test_k8s_patch_from_recorded_report(recording, status, taint_value, summary_lines):
    patch = k8s_node.patch_from_report(_report_text(RECORDINGS[recording]()), "report.json", NODE)
    assert patch.node == NODE and patch.labels == {"rlcheck.io/status": status}
    if taint_value:
        assert patch.add_taints == ({"key": "rlcheck.io/unhealthy", "value": taint_value, "effect": "NoSchedule"},)
        assert patch.remove_taints == ()
    else:
        assert patch.add_taints == () and patch.remove_taints == ("rlcheck.io/unhealthy",)
    lines = patch.annotations["rlcheck.io/summary"].splitlines()
    assert len(lines) == len(summary_lines)
    assert all(line.startswith(want) for line, want in zip(lines, summary_lines, strict=True))
    if recording == "fail-two-checks":  # one line per failing check: its first reason, and how many more it has
        assert lines[1].endswith("... (+3 more)") and len(lines[1]) == k8s_node.LINE_MAX
    assert patch.annotations["rlcheck.io/checked-at"]


def test_k8s_patch_takes_verdicts_naming_this_node_and_leaves_other_nodes():
    mine = dataclasses.replace(OTHER_NODE, node=NODE)
    text = _report_text([OTHER_NODE, mine, IMAGE_FAIL])
    assert k8s_node.patch_from_report(text, "r.json", NODE).add_taints[0]["value"] == "cluster_node_gpus"
    # the same report read on another node: the image FAIL was this machine's, not that node's
    elsewhere = json.loads(text)
    elsewhere["machine"]["hostname"] = "ip-10-1-40-2.ec2.internal"
    patch = k8s_node.patch_from_report(json.dumps(elsewhere), "r.json", "ip-10-1-40-9.ec2.internal",
                                       host="ip-10-1-40-9")
    assert patch.status == "unknown" and patch.add_taints == ()


def test_k8s_summary_is_bounded_whole_lines_and_redacts_secrets():
    many = [Verdict(check_id=f"image_c{i}", status=Status.FAIL, summary=f"{CANARY} " + "x" * 400) for i in range(9)]
    text = k8s_node.summary_text(many, "fail", {"HF_TOKEN": CANARY})
    assert len(text) <= k8s_node.SUMMARY_MAX and CANARY not in text and "<HF_TOKEN redacted>" in text
    lines = text.splitlines()
    assert lines[-1] == f"... and {9 - (len(lines) - 2)} more check(s) (see the report)"
    assert all(len(line) <= k8s_node.LINE_MAX for line in lines) and lines[1].endswith("xxx...")


@pytest.mark.parametrize(("status", "current", "steps"), [
    ("fail", [], ["patch", "taint rlcheck.io/unhealthy=image_numpy_abi:NoSchedule --overwrite"]),
    ("fail", [{"key": "rlcheck.io/unhealthy", "value": "image_numpy_abi", "effect": "NoSchedule"}], ["patch"]),
    ("fail", [{"key": "rlcheck.io/unhealthy", "value": "gpu_node_health", "effect": "NoSchedule"}],
     ["patch", "taint rlcheck.io/unhealthy=image_numpy_abi:NoSchedule --overwrite"]),
    ("recovered", [{"key": "rlcheck.io/unhealthy", "value": "image_numpy_abi", "effect": "NoSchedule"},
                   {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
     ["patch", "taint rlcheck.io/unhealthy-"]),
    ("recovered", [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}], ["patch"]),
])
def test_k8s_kubectl_steps_add_and_lift_only_the_rlcheck_taint(status, current, steps):
    verdicts = [IMAGE_FAIL] if status == "fail" else [dataclasses.replace(IMAGE_FAIL, status=Status.PASS)]
    got = k8s_node.kubectl_steps(k8s_node.node_patch(verdicts, NODE), current)
    assert [a[1] if a[1] == "patch" else " ".join((a[1], *a[4:])) for a in got] == steps
    assert got[0][:6] == ("kubectl", "patch", "node", NODE, "--type=merge", "-p")
    assert json.loads(got[0][6])["metadata"]["labels"] == {"rlcheck.io/status": "fail" if status == "fail" else "pass"}


# --- the command against a fake kubectl -----------------------------------------------------------------------

@pytest.fixture
def fake_kubectl(tmp_path, monkeypatch):
    """kubectl on PATH that records each call's argv (one JSON line) and answers `get` with tmp_path/node.json."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log, node_json = tmp_path / "kubectl.argv", tmp_path / "node.json"
    node_json.write_text(json.dumps({"kind": "Node", "metadata": {"name": NODE}, "spec": {}}), encoding="utf-8")
    script = bin_dir / "kubectl"
    python = shutil.which("python3") or "/usr/bin/python3"
    script.write_text("\n".join([
        f"#!{python}", "import json, os, sys",
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')",
        f"if sys.argv[1] == 'get': sys.stdout.write(open({str(node_json)!r}).read())",
        f"if sys.argv[1] == 'create': open({str(log)!r} + '.stdin', 'a').write(sys.stdin.read() + '\\n')",
        f"rc = {str(tmp_path / 'taint_rc')!r}  # a test writes an exit code here to make `taint` fail",
        "sys.exit(int(open(rc).read()) if sys.argv[1] == 'taint' and os.path.exists(rc) else 0)", ""]),
        encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")

    def calls() -> list[list[str]]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return calls, node_json, tmp_path


def _write(tmp_path, recording: str):
    path = tmp_path / f"{recording}.json"
    path.write_text(_report_text(RECORDINGS[recording]()), encoding="utf-8")
    return str(path)


def test_k8s_cli_fail_report_labels_taints_and_annotates(fake_kubectl, capsys, monkeypatch):
    calls, _, tmp_path = fake_kubectl
    monkeypatch.setenv("HF_TOKEN", CANARY)
    assert main(["k8s", "apply-node-status", "--report", _write(tmp_path, "fail-two-checks"), "--node", NODE]) == 1
    get, patch, taint, condition, event = calls()
    assert get == ["get", "node", NODE, "-o", "json"]
    assert condition[:6] == ["patch", "node", NODE, "--subresource=status", "--type=strategic", "-p"]
    assert json.loads(condition[6])["status"]["conditions"][0]["status"] == "False"
    assert event[:4] == ["create", "--namespace", "rlcheck", "-f"]
    (created,) = [json.loads(x) for x in (tmp_path / "kubectl.argv.stdin").read_text().splitlines() if x]
    assert (created["kind"], created["type"], created["reason"]) == ("Event", "Warning", "RlcheckFailed")
    assert created["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": NODE}
    meta = json.loads(patch[5])["metadata"]
    assert patch[:5] == ["patch", "node", NODE, "--type=merge", "-p"]
    assert meta["labels"] == {"rlcheck.io/status": "fail"}
    assert "FAIL image_numpy_abi: numpy 2.1.0 installed" in meta["annotations"]["rlcheck.io/summary"]
    assert taint == ["taint", "node", NODE, "rlcheck.io/unhealthy=gpu_node_health:NoSchedule", "--overwrite"]
    out = capsys.readouterr()
    assert f"{NODE}: rlcheck.io/status=fail, tainted; FAIL gpu_node_health" in out.err
    assert CANARY not in out.err + out.out + json.dumps(calls()) + (tmp_path / "kubectl.argv.stdin").read_text()


def test_k8s_cli_recovered_node_loses_its_taint(fake_kubectl, capsys):
    calls, node_json, tmp_path = fake_kubectl
    node_json.write_text(json.dumps({"spec": {"taints": [
        {"key": "rlcheck.io/unhealthy", "value": "gpu_node_health", "effect": "NoSchedule"}]}}), encoding="utf-8")
    assert main(["k8s", "apply-node-status", "--report", _write(tmp_path, "pass"), "--node", NODE]) == 0
    assert calls()[2] == ["taint", "node", NODE, "rlcheck.io/unhealthy-"]
    assert json.loads(calls()[1][5])["metadata"]["labels"] == {"rlcheck.io/status": "pass"}
    assert "rlcheck.io/status=pass, untainted" in capsys.readouterr().err


def test_k8s_cli_healthy_untainted_node_gets_only_the_label_and_annotation(fake_kubectl):
    calls, _, tmp_path = fake_kubectl
    assert main(["k8s", "apply-node-status", "--report", _write(tmp_path, "warn"), "--node", NODE]) == 0
    assert [c[:4] for c in calls()] == [["get", "node", NODE, "-o"], ["patch", "node", NODE, "--type=merge"],
                                        ["patch", "node", NODE, "--subresource=status"],
                                        ["create", "--namespace", "rlcheck", "-f"]]


def test_k8s_cli_failing_kubectl_exits_2_naming_the_call(fake_kubectl, capsys):
    calls, _, tmp_path = fake_kubectl
    (tmp_path / "taint_rc").write_text("1")
    assert main(["k8s", "apply-node-status", "--report", _write(tmp_path, "fail-two-checks"), "--node", NODE]) == 2
    err = capsys.readouterr().err
    assert f"not applied to {NODE}: `" in err and "taint node" in err and "exit code 1" in err


def test_k8s_cli_without_kubectl_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["k8s", "apply-node-status", "--report", _write(tmp_path, "pass"), "--node", NODE]) == 2
    assert "'kubectl' not found on PATH" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read it"),
    (b"\xff\xfe{not json", "cannot read it"),
    (b'{"verdicts": [{"status": "FA', "is not an rlcheck report.json"),
    (b'{"go": true}', "is not an rlcheck report.json"),
    (b'{"verdicts": [{"blocking": true, "status": "GREEN", "check_id": "x", "summary": ""}]}',
     "is not an rlcheck report.json"),
], ids=["missing", "not-utf8", "truncated", "no-verdicts", "bad-status"])
def test_k8s_cli_bad_report_exits_2_and_calls_no_kubectl(fake_kubectl, capsys, content, message):
    calls, _, tmp_path = fake_kubectl
    path = tmp_path / "report.json"
    if content is not None:
        path.write_bytes(content)
    assert main(["k8s", "apply-node-status", "--report", str(path), "--node", NODE]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlcheck k8s apply-node-status: nothing applied: ") and message in err
    assert calls() == []


def test_k8s_cli_dry_run_prints_the_patch(capsys, tmp_path):
    assert main(["k8s", "apply-node-status", "--report", _write(tmp_path, "unknown"), "--node", NODE,
                 "--dry-run"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "unknown" and doc["remove_taints"] == ["rlcheck.io/unhealthy"]


def test_k8s_cli_tier_that_cannot_run_marks_the_node_unknown_never_tainted(fake_kubectl, capsys):
    calls, node_json, _ = fake_kubectl
    node_json.write_text(json.dumps({"spec": {"taints": [
        {"key": "rlcheck.io/unhealthy", "value": "gpu_node_health", "effect": "NoSchedule"}]}}), encoding="utf-8")
    assert main(["k8s", "apply-node-status", "--node", NODE, "--hardware", "h300"]) == 0
    meta = json.loads(calls()[1][5])["metadata"]
    assert meta["labels"] == {"rlcheck.io/status": "unknown"}
    assert "UNKNOWN rlcheck_k8s_tier: could not run the quick tier: --hardware='h300': one of b200" in \
        meta["annotations"]["rlcheck.io/summary"]
    assert calls()[2] == ["taint", "node", NODE, "rlcheck.io/unhealthy-"]


@pytest.mark.parametrize(("reading", "status", "tainted"), [
    ("pod_without_gpus.json", "unknown", False),    # the runtime ignored NVIDIA_VISIBLE_DEVICES: cannot see
    ("dead_driver_smi_exit9.json", "fail", True),   # the driver does not answer on a declared H200 node
    ("h200_8gpu_healthy.json", "pass", False),
])
def test_k8s_node_status_of_a_pod_that_cannot_see_the_gpus_is_unknown(reading, status, tainted):
    """The DaemonSet's tier on its node: gpu_node_inventory with the declared profile, beside a passing image check."""
    inventory = preflight.get("gpu_node_inventory").run(DECLARED, inventory_reading(reading))
    image_ok = Verdict(check_id="image_numpy_major", status=Status.PASS, summary="numpy 1.26.4")
    patch = k8s_node.node_patch([image_ok, *inventory], NODE)
    assert patch.status == status and bool(patch.add_taints) is tainted
