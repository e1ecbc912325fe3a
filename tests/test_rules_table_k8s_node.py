"""The node-status patch's rules as tables, both sides of each (rlcheck.deploy.k8s_node, pure or with an injected
kubectl runner that records every call): the summary annotation's bounds (the line cap, the '(+N more)' count, the
whole-line cut at SUMMARY_MAX), the patch's label / taint / annotations from verdicts and from a recorded report
(secrets redacted, checked-at only when known, this node's own verdicts by node or host name), the kubectl calls
in order with their arguments and deadline, read_node's refusal of odd shapes and what a failed call says."""

from __future__ import annotations

import json

import pytest

from rlcheck.deploy import k8s_node
from rlcheck.deploy.k8s_node import KubectlFailed
from rlcheck.process.subproc import Completed
from rlcheck.verdict import Status, Verdict

NODE = "ip-10-1-34-17.ec2.internal"
HOST = "gpu-k8s-77"  # this machine's host name as the tests give it (never the real one)
CANARY = "hf_rlcheck_canary_5d2a90"
SECRETS = {"HF_TOKEN": CANARY}


def _v(status: Status, check_id: str = "image_numpy_abi", summary: str = "numpy 2.1.0 installed",
       node: str | None = None) -> Verdict:
    return Verdict(check_id=check_id, status=status, summary=summary, node=node)


# --- the summary annotation --------------------------------------------------------------------------------------

# a FAIL line 'FAIL image_c0: ' is 15 characters before its reason
PREFIX = len("FAIL image_c0: ")


@pytest.mark.parametrize(("rows", "line"), [
    # (how many verdicts of one check and the length of the first one's reason, the check's line exactly)
    ((1, 10), "FAIL image_c0: " + "r" * 10),
    ((2, 10), "FAIL image_c0: " + "r" * 10 + " (+1 more)"),
    ((3, 10), "FAIL image_c0: " + "r" * 10 + " (+2 more)"),
    ((1, 240 - PREFIX), "FAIL image_c0: " + "r" * (240 - PREFIX)),  # exactly LINE_MAX: whole
    ((1, 241 - PREFIX), "FAIL image_c0: " + "r" * (237 - PREFIX) + "..."),  # one over: cut to LINE_MAX
    ((2, 230 - PREFIX), "FAIL image_c0: " + "r" * (230 - PREFIX) + " (+1 more)"),  # with its count, exactly LINE_MAX
    ((2, 231 - PREFIX), "FAIL image_c0: " + "r" * (227 - PREFIX) + "... (+1 more)"),
    ((2, 235 - PREFIX), "FAIL image_c0: " + "r" * (227 - PREFIX) + "... (+1 more)"),
])
def test_rules_table_k8s_node_summary_line(rows, line):
    count, reason_len = rows
    verdicts = [_v(Status.FAIL, "image_c0", "r" * reason_len)] + [_v(Status.FAIL, "image_c0", "other")] * (count - 1)
    head, got = k8s_node.summary_text(verdicts, "fail").splitlines()
    assert head == f"rlcheck fail: {count} of {count} blocking verdict(s) not PASS/SKIP"
    assert got == line and len(got) <= k8s_node.LINE_MAX


def test_rules_table_k8s_node_summary_orders_worst_first_and_folds_whitespace():
    verdicts = [_v(Status.WARN, "gpu_node_nvlink", "crc \t  errors"), _v(Status.PASS, "gpu_node_ecc"),
                _v(Status.UNKNOWN, "image_tms_preload", "not judged"), _v(Status.SKIP, "gpu_smoke"),
                _v(Status.FAIL, "gpu_node_health", "Xid 79")]
    assert k8s_node.summary_text(verdicts, "fail").splitlines() == [
        "rlcheck fail: 3 of 5 blocking verdict(s) not PASS/SKIP", "FAIL gpu_node_health: Xid 79",
        "UNKNOWN image_tms_preload: not judged", "WARN gpu_node_nvlink: crc errors"]


def _lines_of(n: int, length: int = k8s_node.LINE_MAX) -> list[Verdict]:
    """n FAIL checks (image_c0 .. image_c{n-1}, n <= 10) whose lines are `length` characters each."""
    return [_v(Status.FAIL, f"image_c{i}", "r" * (length - PREFIX)) for i in range(n)]


TAIL = "... and {} more check(s) (see the report)"  # 41 characters for 1 to 9 left out


@pytest.mark.parametrize(("n", "length", "kept"), [
    # the head line 'rlcheck fail: N of N ...' is 54 characters, each further line its length + a newline
    (1, 240, 1), (3, 240, 3),
    (4, 240, 4),  # 54 + 4 x 241 = 1018: all of them, no tail
    (5, 240, 3),  # 54 + 5 x 241 > 1024; 4 lines and the tail 1060; 3 lines and the tail 818
    (9, 240, 3),
    (5, 200, 4),  # 54 + 5 x 201 = 1059; 4 lines and the tail 54 + 804 + 42 = 900
    (9, 200, 4),
])
def test_rules_table_k8s_node_summary_keeps_whole_lines_up_to_summary_max(n, length, kept):
    text = k8s_node.summary_text(_lines_of(n, length), "fail")
    lines = text.splitlines()
    assert len(text) <= k8s_node.SUMMARY_MAX
    assert lines[1:1 + kept] == [f"FAIL image_c{i}: " + "r" * (length - PREFIX) for i in range(kept)]
    assert lines[1 + kept:] == ([TAIL.format(n - kept)] if kept < n else [])


def test_rules_table_k8s_node_summary_of_exactly_summary_max_is_whole():
    # head 54 + 3 x (1 + 240) = 777; then 1 + 122 + 1 + 123 = 1024 exactly
    verdicts = [*_lines_of(3), _v(Status.FAIL, "image_d0", "s" * (122 - PREFIX)),
                _v(Status.FAIL, "image_d1", "s" * (123 - PREFIX))]
    text = k8s_node.summary_text(verdicts, "fail")
    assert len(text) == k8s_node.SUMMARY_MAX and text.splitlines()[-1].startswith("FAIL image_d1: ")
    one_more = [*verdicts[:4], _v(Status.FAIL, "image_d1", "s" * (124 - PREFIX))]
    cut = k8s_node.summary_text(one_more, "fail").splitlines()
    assert cut[-1] == TAIL.format(1) and cut[-2].startswith("FAIL image_d0: ")


@pytest.mark.parametrize("head_len", [
    800,  # the head and one line of 240 and the tail pass SUMMARY_MAX: no line, the head and the tail whole
    1000,  # the head and the tail pass it: both, cut at SUMMARY_MAX
    1100,  # the head alone passes it: the head, cut
])
def test_rules_table_k8s_node_summary_whose_head_leaves_no_room_for_a_line(head_len):
    """At most SUMMARY_MAX characters whatever status word the caller gives: a head line so long that not even one
    check line fits keeps none, only how many were left out, and the cut still ends."""
    short = "rlcheck fail: 2 of 2 blocking verdict(s) not PASS/SKIP"
    status = "fail" + "!" * (head_len - len(short))
    text = k8s_node.summary_text(_lines_of(2), status)
    head = f"rlcheck {status}: 2 of 2 blocking verdict(s) not PASS/SKIP"
    assert len(head) == head_len and text == f"{head}\n{TAIL.format(2)}"[:k8s_node.SUMMARY_MAX]


@pytest.mark.parametrize(("secrets", "shown"), [(SECRETS, "<HF_TOKEN redacted>"), (None, CANARY), ({}, CANARY)])
def test_rules_table_k8s_node_summary_redacts_the_secrets_given(secrets, shown):
    text = k8s_node.summary_text([_v(Status.FAIL, summary=f"token {CANARY} in argv")], "fail", secrets)
    assert text.splitlines()[1] == f"FAIL image_numpy_abi: token {shown} in argv"


# --- the patch from verdicts -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("statuses", "status", "taint"), [
    ((), "unknown", None), ((Status.SKIP,), "unknown", None), ((Status.PASS,), "pass", None),
    ((Status.PASS, Status.WARN), "warn", None), ((Status.WARN, Status.UNKNOWN), "unknown", None),
    ((Status.UNKNOWN, Status.FAIL, Status.PASS), "fail", "check_1"),
    ((Status.FAIL, Status.FAIL), "fail", "check_0"),  # the first failing check names the taint
])
def test_rules_table_k8s_node_patch_label_and_taint(statuses, status, taint):
    verdicts = [_v(s, f"check_{i}") for i, s in enumerate(statuses)]
    patch = k8s_node.node_patch(verdicts, NODE)
    assert (patch.node, patch.status, patch.labels) == (NODE, status, {"rlcheck.io/status": status})
    if taint:
        assert patch.add_taints == ({"key": "rlcheck.io/unhealthy", "value": taint, "effect": "NoSchedule"},)
        assert patch.remove_taints == ()
    else:
        assert patch.add_taints == () and patch.remove_taints == ("rlcheck.io/unhealthy",)


def test_rules_table_k8s_node_patch_taint_value_is_at_most_63_characters():
    patch = k8s_node.node_patch([_v(Status.FAIL, "c" * 70)], NODE)
    assert patch.add_taints[0]["value"] == "c" * 63


@pytest.mark.parametrize(("kwargs", "annotations"), [
    ({}, {"rlcheck.io/summary"}),
    ({"checked_at": ""}, {"rlcheck.io/summary"}),
    ({"checked_at": "2026-12-02T10:00:00+00:00"}, {"rlcheck.io/summary", "rlcheck.io/checked-at"}),
])
def test_rules_table_k8s_node_patch_checked_at_only_when_known(kwargs, annotations):
    patch = k8s_node.node_patch([_v(Status.PASS)], NODE, **kwargs)
    assert set(patch.annotations) == annotations
    assert patch.annotations.get("rlcheck.io/checked-at", "") == kwargs.get("checked_at", "")


@pytest.mark.parametrize(("secrets", "leaks"), [(SECRETS, False), (None, True)])
def test_rules_table_k8s_node_patch_passes_its_secrets_to_the_summary(secrets, leaks):
    patch = k8s_node.node_patch([_v(Status.FAIL, summary=f"HF_TOKEN={CANARY}")], NODE, secrets=secrets)
    assert (CANARY in patch.annotations["rlcheck.io/summary"]) is leaks


def test_rules_table_k8s_node_patch_refuses_an_empty_node_name():
    with pytest.raises(ValueError) as exc:
        k8s_node.node_patch([_v(Status.PASS)], "")
    assert str(exc.value) == "node='': the Kubernetes node name (spec.nodeName) is required"


# --- the patch from a recorded report ----------------------------------------------------------------------------

def _report(machine_host: str | None, rows: list[dict[str, object]], created: str | None = "2026-12-02T10:00:00Z"
            ) -> str:
    doc: dict[str, object] = {"verdicts": rows}
    if machine_host is not None:
        doc["machine"] = {"hostname": machine_host}
    if created is not None:
        doc["created"] = created
    return json.dumps(doc)


def _row(check_id: str, status: str = "FAIL", node: str | None = None, summary: str = "bad") -> dict[str, object]:
    return {"check_id": check_id, "status": status, "summary": summary, "node": node, "blocking": True}


@pytest.mark.parametrize(("machine_host", "host", "status"), [
    (HOST, HOST, "fail"),  # the report ran on this machine: its machine checks are this node's
    (HOST, "gpu-k8s-78", "unknown"),  # it ran elsewhere: nothing about this node
    ("gpu-k8s-78", HOST, "unknown"),
    (NODE, "gpu-k8s-78", "fail"),  # it ran on a machine named as the Kubernetes node
])
def test_rules_table_k8s_node_report_verdicts_by_host_name(machine_host, host, status):
    text = _report(machine_host, [_row("image_numpy_abi")])
    assert k8s_node.patch_from_report(text, "r.json", NODE, host=host).status == status
    assert len(k8s_node.report_verdicts(text, "r.json", NODE, host=host)) == (status == "fail")


def test_rules_table_k8s_node_report_verdicts_default_to_this_machines_host_name(monkeypatch):
    monkeypatch.setattr(k8s_node.socket, "gethostname", lambda: HOST)
    text = _report(HOST, [_row("image_numpy_abi")])
    assert k8s_node.patch_from_report(text, "r.json", NODE).status == "fail"
    assert k8s_node.patch_from_report(text, "r.json", NODE, host="gpu-k8s-78").status == "unknown"
    assert [v.check_id for v in k8s_node.report_verdicts(text, "r.json", NODE)] == ["image_numpy_abi"]
    assert k8s_node.report_verdicts(text, "r.json", NODE, host="gpu-k8s-78") == []


@pytest.mark.parametrize("call", [
    lambda text: k8s_node.patch_from_report(text, "runs/node-7/report.json", NODE, host=HOST),
    lambda text: k8s_node.report_verdicts(text, "runs/node-7/report.json", NODE, host=HOST),
])
@pytest.mark.parametrize("text", ['{"summary": {}}', "[]", '{"verdicts": 3}'])
def test_rules_table_k8s_node_report_refused_names_the_file(call, text):
    with pytest.raises(ValueError, match=r"^runs/node-7/report\.json is not an rlcheck report\.json"):
        call(text)


@pytest.mark.parametrize(("created", "checked_at"), [
    ("2026-12-02T10:00:00Z", "2026-12-02T10:00:00Z"), (None, None), ("", None)])
def test_rules_table_k8s_node_report_checked_at_is_the_reports_created(created, checked_at):
    patch = k8s_node.patch_from_report(_report(HOST, [_row("gpu_node_health", "PASS")], created), "r.json", NODE,
                                       host=HOST)
    assert patch.annotations.get("rlcheck.io/checked-at") == checked_at


@pytest.mark.parametrize(("secrets", "leaks"), [(SECRETS, False), (None, True)])
def test_rules_table_k8s_node_report_redacts_the_secrets_given(secrets, leaks):
    text = _report(None, [_row("cluster_node_env", node=NODE, summary=f"HF_TOKEN={CANARY} in the worker's env")])
    patch = k8s_node.patch_from_report(text, "r.json", NODE, secrets, host=HOST)
    assert patch.status == "fail" and (CANARY in patch.annotations["rlcheck.io/summary"]) is leaks


# --- kubectl, through a recording runner -------------------------------------------------------------------------

class Kubectl:
    """A runner that records (argv, keyword arguments) and answers `get` with `node` (a JSON text) and every other
    call with `answers` in turn (returncode, stdout, stderr, timed_out), default success."""

    def __init__(self, node: str = '{"spec": {}}', answers: list[tuple[int | None, str, str, bool]] | None = None):
        self.node, self.answers, self.calls = node, list(answers or []), []

    def __call__(self, argv, **kwargs) -> Completed:
        self.calls.append((argv, kwargs))
        if argv[1] == "get":
            return Completed(argv=argv, returncode=0, stdout=self.node, stderr="", timed_out=False)
        rc, out, err, timed_out = self.answers.pop(0) if self.answers else (0, "", "", False)
        return Completed(argv=argv, returncode=rc, stdout=out, stderr=err, timed_out=timed_out)


def _patch(status: Status = Status.FAIL) -> k8s_node.NodePatch:
    return k8s_node.node_patch([_v(status)], NODE, "2026-12-02T10:00:00Z")


PAYLOAD = {  # the merge patch's text for _patch(FAIL): keys sorted, so the same patch is always the same text
    Status.FAIL: '{"metadata": {"annotations": {"rlcheck.io/checked-at": "2026-12-02T10:00:00Z", "rlcheck.io/summary": '
                 '"rlcheck fail: 1 of 1 blocking verdict(s) not PASS/SKIP\\nFAIL image_numpy_abi: numpy 2.1.0 '
                 'installed"}, "labels": {"rlcheck.io/status": "fail"}}}',
    Status.PASS: '{"metadata": {"annotations": {"rlcheck.io/checked-at": "2026-12-02T10:00:00Z", "rlcheck.io/summary": '
                 '"rlcheck pass: 0 of 1 blocking verdict(s) not PASS/SKIP"}, "labels": {"rlcheck.io/status": '
                 '"pass"}}}',
}
TAINT_ON = "rlcheck.io/unhealthy=image_numpy_abi:NoSchedule"
TAINTED = '{"spec": {"taints": [{"key": "rlcheck.io/unhealthy", "value": "gpu_node_health", "effect": "NoSchedule"}]}}'


@pytest.mark.parametrize(("status", "node", "steps"), [
    # (the verdict, the node object `get` prints, the calls after `get`, each as its argv after the kubectl)
    (Status.FAIL, '{"spec": {}}', [("patch", "node", NODE, "--type=merge", "-p", PAYLOAD[Status.FAIL]),
                                   ("taint", "node", NODE, TAINT_ON, "--overwrite")]),
    (Status.FAIL, '{"metadata": {"name": "n"}}', [("patch", "node", NODE, "--type=merge", "-p", PAYLOAD[Status.FAIL]),
                                                 ("taint", "node", NODE, TAINT_ON, "--overwrite")]),
    (Status.FAIL, '{"spec": {"taints": null}}', [("patch", "node", NODE, "--type=merge", "-p", PAYLOAD[Status.FAIL]),
                                                 ("taint", "node", NODE, TAINT_ON, "--overwrite")]),
    (Status.FAIL, TAINTED, [("patch", "node", NODE, "--type=merge", "-p", PAYLOAD[Status.FAIL]),
                            ("taint", "node", NODE, TAINT_ON, "--overwrite")]),
    (Status.PASS, TAINTED, [("patch", "node", NODE, "--type=merge", "-p", PAYLOAD[Status.PASS]),
                            ("taint", "node", NODE, "rlcheck.io/unhealthy-")]),
    (Status.PASS, '{"spec": {}}', [("patch", "node", NODE, "--type=merge", "-p", PAYLOAD[Status.PASS])]),
])
@pytest.mark.parametrize("kubectl", [None, "/opt/k8s/bin/kubectl"])
def test_rules_table_k8s_node_apply_calls_in_order(status, node, steps, kubectl):
    runner = Kubectl(node)
    named = {} if kubectl is None else {"kubectl": kubectl}
    made = k8s_node.apply(_patch(status), runner=runner, **named)
    exe = kubectl or "kubectl"
    want = [(exe, "get", "node", NODE, "-o", "json"), *((exe, *s) for s in steps)]
    assert [argv for argv, _ in runner.calls] == want
    assert made == want[1:]
    assert all(kwargs == {"timeout_s": k8s_node.KUBECTL_TIMEOUT_S} for _, kwargs in runner.calls)


def test_rules_table_k8s_node_apply_with_the_node_given_reads_nothing():
    runner = Kubectl()
    node = json.loads(TAINTED)
    made = k8s_node.apply(_patch(Status.PASS), "kc", runner, node=node)
    assert [argv for argv, _ in runner.calls] == made == [
        ("kc", "patch", "node", NODE, "--type=merge", "-p", PAYLOAD[Status.PASS]),
        ("kc", "taint", "node", NODE, "rlcheck.io/unhealthy-")]


def test_rules_table_k8s_node_apply_stops_at_the_first_failed_call():
    runner = Kubectl(answers=[(1, "", 'Error from server (Forbidden): nodes "x" is forbidden', False)])
    with pytest.raises(KubectlFailed) as exc:
        k8s_node.apply(_patch(Status.FAIL), runner=runner)
    assert [argv[1] for argv, _ in runner.calls] == ["get", "patch"]
    assert str(exc.value) == (f"`kubectl patch node {NODE} --type=merge ...` exit code 1: "
                              'Error from server (Forbidden): nodes "x" is forbidden')


@pytest.mark.parametrize(("answer", "why"), [
    ((1, "", "", False), "exit code 1: no output"),
    ((None, "", "", True), "killed at its deadline: no output"),
    ((-9, "", "", False), "killed by signal SIGKILL: no output"),
    ((2, "a\n", "b\nc\nd\ne\n", False), "exit code 2: c\nd\ne"),  # the last three lines only
    ((0, "ok", "", True), "killed at its deadline: ok"),
])
def test_rules_table_k8s_node_run_kubectl_failed_says_how(answer, why):
    runner = Kubectl(answers=[answer])
    argv = ("kubectl", "patch", "node", NODE, "--type=merge", "-p", f'{{"summary": "{CANARY}"}}')
    with pytest.raises(KubectlFailed) as exc:
        k8s_node.run_kubectl(argv, runner)
    assert str(exc.value) == f"`kubectl patch node {NODE} --type=merge ...` {why}"
    assert CANARY not in str(exc.value)  # never the payload


@pytest.mark.parametrize(("stdin", "kwargs"), [
    (None, {"timeout_s": 30.0}), ("", {"timeout_s": 30.0, "stdin": ""}),
    ("kind: Event\n", {"timeout_s": 30.0, "stdin": "kind: Event\n"})])
def test_rules_table_k8s_node_run_kubectl_deadline_and_stdin(stdin, kwargs):
    runner = Kubectl(answers=[(0, "created", "", False)])
    done = k8s_node.run_kubectl(["kubectl", "create", "-f", "-"], runner, stdin)
    assert runner.calls == [(("kubectl", "create", "-f", "-"), kwargs)] and done.stdout == "created"


# --- read_node ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("printed", "node"), [
    ('{"spec": {"taints": []}}', {"spec": {"taints": []}}),
    ('{"metadata": {}}', {"metadata": {}}),  # no spec: a node with no taints
    ("{}", {}),
])
def test_rules_table_k8s_node_read_node_takes_a_node_object(printed, node):
    runner = Kubectl(printed)
    assert k8s_node.read_node("gpu-1", runner=runner) == node
    assert runner.calls == [(("kubectl", "get", "node", "gpu-1", "-o", "json"), {"timeout_s": 30.0})]


@pytest.mark.parametrize(("printed", "why"), [
    ("[]", "not a JSON object with a spec object"),
    ('"gpu-1"', "not a JSON object with a spec object"),
    ("null", "not a JSON object with a spec object"),
    ('{"spec": []}', "not a JSON object with a spec object"),
    ('{"spec": null}', "not a JSON object with a spec object"),
    ("", "Expecting value: line 1 column 1 (char 0)"),
    ("error: You must be logged in", "Expecting value: line 1 column 1 (char 0)"),
])
def test_rules_table_k8s_node_read_node_refuses_odd_shapes(printed, why):
    with pytest.raises(KubectlFailed) as exc:
        k8s_node.read_node("gpu-1", "kc", Kubectl(printed))
    assert str(exc.value) == f"`kc get node gpu-1 -o json` printed no node object: {why}"


def test_rules_table_k8s_node_read_node_failed_get():
    def runner(argv, **kwargs):
        return Completed(argv=argv, returncode=1, stdout="", stderr='Error from server (NotFound): nodes "gpu-9"',
                         timed_out=False)
    with pytest.raises(KubectlFailed) as exc:
        k8s_node.read_node("gpu-9", runner=runner)
    assert str(exc.value) == ('`kubectl get node gpu-9 -o ...` exit code 1: Error from server (NotFound): '
                              'nodes "gpu-9"')
