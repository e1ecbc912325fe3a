"""Rule table for the node-health metrics node-exporter reads (rlcheck.deploy.node_metrics): the whole text of a pass
for each node status, each check's worst status whatever order its verdicts come in, the escapes of a label value,
and the file written whole under a *.prom name (never a half-written file, never a stray temporary one)."""

from __future__ import annotations

import os
import stat

import pytest

from rlcheck.deploy import node_metrics
from rlcheck.verdict import Status, Verdict

HEAD = ["# HELP rlcheck_node_status The node's rlcheck status: 1 for the current one (worst blocking verdict).",
        "# TYPE rlcheck_node_status gauge"]
CHECKS_HEAD = ["# HELP rlcheck_node_check_status Each check's worst status on this node: 1 for the current one.",
               "# TYPE rlcheck_node_check_status gauge"]
TAIL_HEAD = ["# HELP rlcheck_node_last_run_timestamp_seconds When rlcheck last judged this node (Unix time).",
             "# TYPE rlcheck_node_last_run_timestamp_seconds gauge"]


def _v(check: str, status: Status) -> Verdict:
    return Verdict(check_id=check, status=status, summary="s")


def _node(current: str) -> list[str]:
    return [f'rlcheck_node_status{{status="{s}"}} {int(s == current)}' for s in ("pass", "warn", "fail", "unknown")]


def _check(check: str, current: str) -> list[str]:
    return [f'rlcheck_node_check_status{{check="{check}",status="{s}"}} {int(s == current)}'
            for s in ("FAIL", "UNKNOWN", "WARN", "PASS", "SKIP")]


@pytest.mark.parametrize("node_status", ["pass", "warn", "fail", "unknown"])
def test_prometheus_text_no_verdicts_is_the_node_status_and_the_time_alone(node_status):
    text = node_metrics.prometheus_text([], node_status, 1764800000.0)
    assert text == "\n".join([*HEAD, *_node(node_status), *CHECKS_HEAD, *TAIL_HEAD,
                              "rlcheck_node_last_run_timestamp_seconds 1764800000.000"]) + "\n"


@pytest.mark.parametrize(("statuses", "worst"), [
    # each pair of the ranking FAIL < UNKNOWN < WARN < PASS < SKIP, in both orders: the worst one is current
    ((Status.FAIL, Status.UNKNOWN), "FAIL"), ((Status.UNKNOWN, Status.FAIL), "FAIL"),
    ((Status.UNKNOWN, Status.WARN), "UNKNOWN"), ((Status.WARN, Status.UNKNOWN), "UNKNOWN"),
    ((Status.WARN, Status.PASS), "WARN"), ((Status.PASS, Status.WARN), "WARN"),
    ((Status.PASS, Status.SKIP), "PASS"), ((Status.SKIP, Status.PASS), "PASS"),
    ((Status.SKIP, Status.SKIP), "SKIP"), ((Status.PASS,), "PASS"),
    ((Status.SKIP, Status.FAIL, Status.PASS), "FAIL"), ((Status.PASS, Status.UNKNOWN, Status.SKIP), "UNKNOWN"),
])
def test_prometheus_text_each_check_shows_its_worst_status(statuses, worst):
    text = node_metrics.prometheus_text([_v("gpu_node_health", s) for s in statuses], "fail", 2.5)
    assert text == "\n".join([*HEAD, *_node("fail"), *CHECKS_HEAD, *_check("gpu_node_health", worst), *TAIL_HEAD,
                              "rlcheck_node_last_run_timestamp_seconds 2.500"]) + "\n"


def test_prometheus_text_checks_sorted_by_id_each_judged_on_its_own():
    verdicts = [_v("zeta", Status.PASS), _v("alpha", Status.WARN), _v("zeta", Status.UNKNOWN), _v("alpha", Status.SKIP)]
    text = node_metrics.prometheus_text(verdicts, "unknown", 0.0004)
    assert text == "\n".join([*HEAD, *_node("unknown"), *CHECKS_HEAD, *_check("alpha", "WARN"),
                              *_check("zeta", "UNKNOWN"), *TAIL_HEAD,
                              "rlcheck_node_last_run_timestamp_seconds 0.000"]) + "\n"


@pytest.mark.parametrize(("check", "label"), [
    ('we"ird', 'we\\"ird'), ("back\\slash", "back\\\\slash"), ("two\nlines", "two\\nlines"),
    ('\\"', '\\\\\\"'), ("plain_id", "plain_id"),
])
def test_prometheus_text_label_values_escaped(check, label):
    text = node_metrics.prometheus_text([_v(check, Status.FAIL)], "fail", 1.0)
    assert f'rlcheck_node_check_status{{check="{label}",status="FAIL"}} 1' in text.splitlines()


@pytest.mark.parametrize("node_status", ["ok", "PASS", "", "skip"])
def test_prometheus_text_refuses_a_node_status_k8s_node_never_gives(node_status):
    with pytest.raises(ValueError) as raised:
        node_metrics.prometheus_text([], node_status, 1.0)
    assert str(raised.value) == f"node_status={node_status!r}: one of pass, warn, fail, unknown"


def test_write_textfile_writes_whole_readable_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "textfile" / "deeper" / "rlcheck.prom"
    node_metrics.write_textfile(target, "a 1\n")
    node_metrics.write_textfile(target, "b 2\n")  # replaces the earlier pass whole
    assert target.read_text(encoding="utf-8") == "b 2\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert sorted(p.name for p in target.parent.iterdir()) == ["rlcheck.prom"]


def test_write_textfile_temporary_is_a_dot_file_beside_the_target(tmp_path, monkeypatch):
    seen: list[str] = []
    real = os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        assert os.path.dirname(src) == str(tmp_path)
        real(src, dst)

    monkeypatch.setattr(node_metrics.os, "replace", spy)
    node_metrics.write_textfile(tmp_path / "rlcheck.prom", "x\n")
    assert len(seen) == 1 and seen[0].startswith(".rlcheck.prom.")


@pytest.mark.parametrize("name", ["rlcheck.txt", "rlcheck.prom.tmp", "rlcheck"])
def test_write_textfile_refuses_a_name_the_collector_never_reads(tmp_path, name):
    with pytest.raises(ValueError) as raised:
        node_metrics.write_textfile(tmp_path / name, "x\n")
    assert str(raised.value) == f"{tmp_path / name}: node-exporter's textfile collector reads only *.prom files"
    assert list(tmp_path.iterdir()) == []


def test_write_textfile_failed_rename_removes_its_temporary_and_raises(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(node_metrics.os, "replace", refuse)
    with pytest.raises(OSError, match="Permission denied"):
        node_metrics.write_textfile(tmp_path / "rlcheck.prom", "x\n")
    assert list(tmp_path.iterdir()) == []


def test_write_textfile_failure_after_the_temporary_is_gone_raises_the_failure_itself(tmp_path, monkeypatch):
    def vanish_then_refuse(src, dst):
        os.unlink(src)  # another cleaner took it first: the caller still hears why the write failed
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(node_metrics.os, "replace", vanish_then_refuse)
    with pytest.raises(OSError) as raised:
        node_metrics.write_textfile(tmp_path / "rlcheck.prom", "x\n")
    assert (raised.value.errno, raised.value.strerror) == (18, "Invalid cross-device link")


def test_write_textfile_writes_utf_8_whatever_the_nodes_locale(tmp_path, monkeypatch):
    import codecs

    real = os.fdopen

    def fdopen(fd, mode, encoding=None):  # the locale's default stands in as Latin-1: a node whose LANG is not UTF-8
        return real(fd, mode, encoding=codecs.lookup(encoding).name if encoding else "latin-1")

    monkeypatch.setattr(node_metrics.os, "fdopen", fdopen)
    text = node_metrics.prometheus_text([_v("gpu_ü", Status.PASS)], "pass", 1.0)
    node_metrics.write_textfile(tmp_path / "rlcheck.prom", text)
    assert (tmp_path / "rlcheck.prom").read_bytes() == text.encode("utf-8")
