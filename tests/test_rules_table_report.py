"""The run report's rules as tables, both sides of each (rlcheck.report, pure or on tmp_path): the decision line
word for word (a job or a recipe, SKIPs apart, nothing judged, nothing blocking), the exit status, hardware
detection's UNKNOWN, where report files cannot go, the summary lines, report.json's document, report.md whole (the
decision, what to fix first, every verdict, reproductions, the cache, versions), the history copy's name and its
never-overwrite rule, and that neither file keeps a secret."""

from __future__ import annotations

import datetime
import io
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck import report
from rlcheck.verdict import Status, Verdict

P, W, F, S, U = Status.PASS, Status.WARN, Status.FAIL, Status.SKIP, Status.UNKNOWN
TOKEN = "hf_abcdefghijklmnopqrstuvwxyz0123"


def _rec(status: Status, check_id: str = "image_c0", kind: str = "check", node: str | None = None,
         summary: str = "s", cached: dict[str, object] | None = None) -> report.Recorded:
    return report.Recorded(verdict=Verdict(check_id=check_id, status=status, summary=summary, node=node), kind=kind,
                           test_id=f"checks/test_x.py::test_x[{check_id}]", cached=cached)


# --- the decision, word for word ---------------------------------------------------------------------------------

LINES = [
    # (blocking statuses with the node of a FAIL, the recipe as given, the whole line)
    ((P,), "r", "GO: 1 blocking check(s) judged and passed for recipe r on hardware h200"),
    ((P, W, S), "job train.sh", "GO: 2 blocking check(s) judged and passed; 1 not applicable (SKIP) for job "
                                "train.sh on hardware h200"),
    ((S, S), "r", "NO-GO: nothing judged: all 2 blocking check(s) for recipe r on hardware h200 were not applicable "
                  "(SKIP); a run that judged nothing promises nothing"),
    ((P, F, U, S), "r", "NO-GO: 2 of 3 judged blocking check(s); 1 not applicable (SKIP) for recipe r on hardware "
                        "h200: image_c1 [gpu-a01] FAIL; image_c2 UNKNOWN"),
    ((F,), "jobless", "NO-GO: 1 of 1 judged blocking check(s) for recipe jobless on hardware h200: image_c0 [gpu-a01] "
                      "FAIL"),
]


@pytest.mark.parametrize(("statuses", "recipe", "line"), LINES)
def test_rules_table_report_decision_line(statuses, recipe, line):
    rows = [_rec(s, f"image_c{i}", node="gpu-a01" if s is F else None) for i, s in enumerate(statuses)]
    decision = report.decide(rows, recipe, "h200")
    assert decision.line == line
    assert (decision.go, decision.judged) == (line.startswith("GO"), True)


def test_rules_table_report_decision_without_a_blocking_check():
    decision = report.decide([_rec(F, kind="reproducer"), _rec(P, kind="test")], "job a.sh", "none")
    assert decision == report.Decision(
        go=False, judged=False, line="no GO / NO-GO: no blocking check ran for job a.sh on hardware none (only checks/ "
                                     "decide)")
    assert report.decide([], "r", "h200").line == ("no GO / NO-GO: no blocking check ran for recipe r on hardware "
                                                   "h200 (only checks/ decide)")


@pytest.mark.parametrize(("kinds", "blocking"), [
    (("check",), [True]), (("reproducer", "case", "test", "check"), [False, False, False, True])])
def test_rules_table_report_only_checks_block(kinds, blocking):
    assert [_rec(P, kind=k).blocking for k in kinds] == blocking


@pytest.mark.parametrize(("rows", "code"), [
    ([], 0), ([_rec(F, kind="reproducer")], 0), ([_rec(P)], 0), ([_rec(W), _rec(S)], 0), ([_rec(S)], 2),
    ([_rec(S), _rec(S)], 2), ([_rec(F)], 1), ([_rec(F), _rec(S)], 1), ([_rec(F), _rec(U)], 2), ([_rec(U)], 2),
    ([_rec(P), _rec(U, kind="reproducer")], 0), ([_rec(P), _rec(F, kind="case")], 0),
])
def test_rules_table_report_exit_status(rows, code):
    assert report.exit_status(rows) == code


def test_rules_table_report_detection_unknown():
    got = report.detection_unknown("nvidia-smi ended with exit code 9")
    assert got == report.Recorded(verdict=Verdict(
        check_id="hardware_detection", status=U,
        summary="--hardware=auto could not tell the hardware: nvidia-smi ended with exit code 9",
        remedy="Fix nvidia-smi on this machine, or name the hardware: --hardware=h200 (or none)"),
        kind="check", test_id="--hardware=auto")
    assert got.blocking and report.exit_status([_rec(P), got]) == 2


# --- where report files can go -----------------------------------------------------------------------------------

def test_rules_table_report_unwritable(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    assert report.unwritable(tmp_path / "new" / "deeper") == ""
    assert report.unwritable(tmp_path) == ""
    assert not (tmp_path / "new").exists()  # nothing created
    assert report.unwritable(tmp_path / "afile" / "out") == f"{tmp_path / 'afile'} is not a folder"
    asked = []
    monkeypatch.setattr(report.os, "access", lambda path, mode: asked.append((Path(path), mode)) is not None)
    assert report.unwritable(tmp_path / "new" / "deeper") == f"{tmp_path} is not writable by this user"
    import os
    assert asked == [(tmp_path, os.W_OK | os.X_OK)]


class Nowhere:
    """A path none of whose folders exists, up to its root (a cwd that was removed, say)."""

    parent: Nowhere

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def exists(self) -> bool:
        return False

    @property
    def parent(self) -> Nowhere:  # type: ignore[override]
        return self if self.depth == 0 else Nowhere(self.depth - 1)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Nowhere) and other.depth == self.depth

    __hash__ = None  # type: ignore[assignment]


def test_rules_table_report_unwritable_with_no_folder_above():
    assert report.unwritable(Nowhere(3)) == "no existing folder above it"  # type: ignore[arg-type]


# --- summary lines and report.json -------------------------------------------------------------------------------

def test_rules_table_report_summary_lines():
    rows = [_rec(P, "gpu_node_health", summary="8 GPUs healthy"),
            _rec(F, "cluster_node_xid", node="gpu-a01", summary="Xid 79"),
            _rec(U, "repro_x", kind="reproducer", summary="kept", cached={"made": "2026-12-01T10:00:00+00:00"}),
            _rec(W, "repro_y", kind="reproducer", summary="kept", cached={"by": "rlcheck"}),
            _rec(S, "repro_z", kind="reproducer", summary="fresh", cached={})]
    assert report.summary_lines(rows) == [
        "PASS    gpu_node_health: 8 GPUs healthy",
        "FAIL    cluster_node_xid [gpu-a01]: Xid 79",
        "UNKNOWN repro_x: kept [cached: made 2026-12-01T10:00:00+00:00]",
        "WARN    repro_y: kept [cached: made ?]",
        "SKIP    repro_z: fresh"]


def test_rules_table_report_recorded_to_dict():
    row = report.Recorded(verdict=Verdict(check_id="repro_x", status=F, summary="s", failure_id="numpy2-megatron"),
                          kind="reproducer", test_id="t", reproduction={"state": "reproduced"}, cached={"made": "m"})
    assert row.to_dict() == {"status": "FAIL", "summary": "s", "details": "", "node": None,
                             "failure_id": "numpy2-megatron", "remedy": "", "check_id": "repro_x", "kind": "reproducer",
                             "test_id": "t", "blocking": False, "reproduction": {"state": "reproduced"},
                             "cached": {"made": "m"}}


def test_rules_table_report_document():
    rows = [_rec(P), _rec(F, "image_c1"), _rec(F, "image_c2"), _rec(S, "image_c3", kind="reproducer")]
    decision = report.decide(rows, "r", "h200")
    doc = report.build_document(rows, decision, {"recipe": "r", "hardware": {"profile": "h200"}})
    assert list(doc) == ["rlcheck_report", "created", "go", "decision", "recipe", "hardware", "machine", "versions",
                         "counts", "verdicts"]
    assert (doc["rlcheck_report"], doc["go"], doc["decision"]) == (1, False, decision.line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", doc["created"])
    age = datetime.datetime.now(datetime.UTC) - datetime.datetime.fromisoformat(doc["created"])
    assert datetime.timedelta(0) <= age < datetime.timedelta(minutes=5)
    assert doc["machine"] == {"hostname": platform.node(), "arch": platform.machine(),
                              "python": platform.python_version()}
    assert doc["counts"] == {"PASS": 1, "WARN": 0, "FAIL": 2, "SKIP": 1, "UNKNOWN": 0}
    assert list(doc["versions"]) == list(report.STACK_PACKAGES)
    assert doc["verdicts"] == [r.to_dict() for r in rows]
    assert report.build_document(rows, report.Decision(go=True, line="GO: x"), {})["go"] is True


# --- report.md ---------------------------------------------------------------------------------------------------

def _verdict(status: str, check_id: str, summary: str, **extra: object) -> dict[str, object]:
    return {"status": status, "check_id": check_id, "summary": summary, "node": None, "remedy": "", "details": "",
            "failure_id": None, "reproduction": None, "cached": None, **extra}


DOC = {
    "go": False, "decision": "NO-GO: 2 of 4 | judged", "created": "2026-12-02T10:00:00+00:00",
    "hardware": {"evidence": "--hardware=h200  (declared)", "profile": "h200"}, "recipe": "qwen3-4b-colocated",
    "ray_address": None, "versions": {"ray": "2.49.0", "sglang": None},
    "verdicts": [
        _verdict("PASS", "image_tms_preload", "preloaded"),
        _verdict("WARN", "gpu_node_nvlink", "crc  errors", node="gpu-a02", remedy="watch it"),
        _verdict("FAIL", "cluster_node_xid", "Xid 79 | fell off the bus", node="gpu-a01", remedy="drain gpu-a01",
                 details="kernel: NVRM: Xid 79", failure_id="xid-79"),
        _verdict("UNKNOWN", "image_numpy_abi", "not judged"),
        _verdict("FAIL", "repro_numpy2", "reproduced", failure_id="numpy2-megatron",
                 reproduction={"state": "reproduced"}, cached={"made": "2026-12-01T09:00:00+00:00"}),
        _verdict("PASS", "repro_tms", "not reproduced", failure_id="tms-cu12", reproduction={"state": "absent"}),
        _verdict("SKIP", "gpu_smoke", "needs a CUDA GPU"),
    ],
}
MD = """\
# rlcheck report: NO-GO

**NO-GO: 2 of 4 \\| judged**

- hardware: --hardware=h200 (declared)
- recipe: qwen3-4b-colocated
- framework: not stated
- ray: embedded loopback Ray
- created: 2026-12-02T10:00:00+00:00

## What to fix

### FAIL cluster_node_xid @ gpu-a01

Xid 79 | fell off the bus

Fix: drain gpu-a01

```
kernel: NVRM: Xid 79
```

### FAIL repro_numpy2

reproduced

### UNKNOWN image_numpy_abi

not judged

### WARN gpu_node_nvlink @ gpu-a02

crc  errors

Fix: watch it

## Every verdict

| status | check @ node | summary | known failure |
|---|---|---|---|
| PASS | image_tms_preload | preloaded |  |
| WARN | gpu_node_nvlink @ gpu-a02 | crc errors |  |
| FAIL | cluster_node_xid @ gpu-a01 | Xid 79 \\| fell off the bus | xid-79 |
| UNKNOWN | image_numpy_abi | not judged |  |
| FAIL | repro_numpy2 | reproduced | numpy2-megatron |
| PASS | repro_tms | not reproduced | tms-cu12 |
| SKIP | gpu_smoke | needs a CUDA GPU |  |

## Known failures reproduced

| failure | state | evidence | made |
|---|---|---|---|
| numpy2-megatron | reproduced | reproduced | cached, made 2026-12-01T09:00:00+00:00 |
| tms-cu12 | absent | not reproduced | this run |

## Stack versions

| package | version |
|---|---|
| ray | 2.49.0 |
| sglang | not installed |
"""


def test_rules_table_report_markdown_whole():
    assert report.render_markdown(DOC) == MD


HEAD = ["- hardware: --hardware=h200 (declared)", "- recipe: qwen3-4b-colocated", "- framework: not stated",
        "- ray: embedded loopback Ray", "- created: 2026-12-02T10:00:00+00:00"]


@pytest.mark.parametrize(("changes", "replaced", "added"), [
    # (the document's changes, the head lines they replace by index, the lines added after the head)
    ({"job": {"path": "train.sh", "format": "shell"}}, {1: "- job: train.sh (shell)"}, []),
    ({"job": None}, {}, []),
    ({"framework": {"judged": "slime  0.3.1 | main"}}, {2: "- framework: slime 0.3.1 \\| main"}, []),
    ({"framework": {"judged": ""}}, {}, []),
    ({"framework": None}, {}, []),
    ({"ray_address": "ray://127.0.0.1:10001"}, {3: "- ray: ray://127.0.0.1:10001"}, []),
    ({"cache": {"enabled": False}}, {}, ["- reproducer cache: off (--no-cache)"]),
    ({"cache": {"enabled": False, "off": ""}}, {}, ["- reproducer cache: off (--no-cache)"]),
    ({"cache": {"enabled": False, "off": "no cache folder of this user's alone: RLCHECK_CACHE_DIR is  empty | x"}},
     {}, ["- reproducer cache: off (no cache folder of this user's alone: RLCHECK_CACHE_DIR is empty \\| x)"]),
    ({"cache": {"enabled": True, "reused": 3, "kept": 5, "dir": "/var/cache/rl | x"}}, {},
     ["- reproducer cache: 3 verdict(s) reused, 5 kept (/var/cache/rl \\| x)"]),
    ({"cache": {"enabled": True, "reused": 0, "kept": 1, "dir": "c", "notes": ["one  note", "two|b"]}}, {},
     ["- reproducer cache: 0 verdict(s) reused, 1 kept (c)", "- reproducer cache: one note",
      "- reproducer cache: two\\|b"]),
    ({"cache": {}}, {}, []),
    ({"cache": None}, {}, []),
])
def test_rules_table_report_markdown_head(changes, replaced, added):
    lines = report.render_markdown({**DOC, **changes}).splitlines()
    want = [replaced.get(i, line) for i, line in enumerate(HEAD)] + added
    assert lines[:4] == MD.splitlines()[:4]
    assert lines[4:4 + len(want) + 2] == [*want, "", "## What to fix"]


@pytest.mark.parametrize(("cached", "made"), [
    ({"made": "2026-12-01T09:00:00+00:00", "by": "rlcheck 0.4"}, "cached, made 2026-12-01T09:00:00+00:00"),
    ({"by": "rlcheck 0.4"}, "cached, made ?"),  # an entry that did not say when: '?', never 'None'
    ({}, "this run"),
    (None, "this run"),
])
def test_rules_table_report_markdown_reproduction_made(cached, made):
    repro = _verdict("FAIL", "repro_numpy2", "reproduced", failure_id="numpy2-megatron",
                     reproduction={"state": "reproduced"}, cached=cached)
    lines = report.render_markdown({**DOC, "verdicts": [repro], "versions": {}}).splitlines()
    start = lines.index("## Known failures reproduced")
    assert lines[start + 4:start + 6] == [f"| numpy2-megatron | reproduced | reproduced | {made} |", ""]


def test_rules_table_report_markdown_go():
    lines = report.render_markdown({**DOC, "go": True, "decision": "GO: 1  judged"}).splitlines()
    assert lines[:4] == ["# rlcheck report: GO", "", "**GO: 1 judged**", ""]


@pytest.mark.parametrize("statuses", [("PASS",), ("PASS", "SKIP")])
def test_rules_table_report_markdown_nothing_to_fix_and_nothing_reproduced(statuses):
    doc = {**DOC, "verdicts": [_verdict(s, f"image_c{i}", "ok") for i, s in enumerate(statuses)], "versions": {}}
    md = report.render_markdown(doc)
    assert "## What to fix" not in md and "## Known failures reproduced" not in md
    assert md.endswith("## Every verdict\n\n| status | check @ node | summary | known failure |\n|---|---|---|---|\n"
                       + "".join(f"| {s} | image_c{i} | ok |  |\n" for i, s in enumerate(statuses))
                       + "\n## Stack versions\n\n| package | version |\n|---|---|\n")


def test_rules_table_report_markdown_at_cluster_scale():
    """From 8 nodes on: the failing nodes first, per-node PASS grouped; report.md's own cell and where rules apply."""
    nodes = [f"gpu-a{i:02d}" for i in range(8)]
    verdicts = [_verdict("PASS", "cluster_node_xid", "no  Xid", node=n) for n in nodes[1:]]
    verdicts.append(_verdict("FAIL", "cluster_node_xid", "Xid 79 | off the bus", node="gpu|a00"))
    md = report.render_markdown({**DOC, "verdicts": verdicts, "versions": {}})
    lines = md.splitlines()
    start = lines.index("## Failing nodes")
    assert lines[start:start + 8] == [
        "## Failing nodes", "", "1 of 8 nodes block GO:", "", "| node | FAIL | UNKNOWN | checks |", "|---|---|---|---|",
        "| gpu\\|a00 | 1 | 0 | cluster_node_xid (FAIL) |", ""]
    assert lines.index("## What to fix") == start + 8
    rows = lines[lines.index("|---|---|---|---|", start + 6) + 1:lines.index("## Stack versions") - 1]
    assert rows == [
        "| PASS | cluster_node_xid @ 7 nodes: gpu-a01, gpu-a02, gpu-a03, gpu-a04, gpu-a05 (+2 more) | no Xid |  |",
        "| FAIL | cluster_node_xid @ gpu\\|a00 | Xid 79 \\| off the bus |  |"]
    below = report.render_markdown({**DOC, "verdicts": verdicts[1:], "versions": {}})
    assert "## Failing nodes" not in below and "| PASS | cluster_node_xid @ gpu-a02 | no Xid |  |" in below


@pytest.mark.parametrize("count", [8, 7])
def test_rules_table_report_markdown_what_to_fix_groups_a_checks_nodes_only_at_scale(count):
    """From 8 nodes on, one check failing on several nodes with one fix is one 'What to fix' section naming them;
    below 8 each node's verdict is its own section."""
    nodes = [f"gpu-a{i:02d}" for i in range(count)]
    verdicts = [_verdict("PASS", "cluster_node_xid", "no Xid", node=n) for n in nodes[2:]]
    verdicts += [_verdict("FAIL", "cluster_node_xid", "Xid 79: fell off the bus", node=n, remedy=f"drain {n}")
                 for n in nodes[:2]]
    verdicts += [_verdict("FAIL", "gpu_node_ecc", "12 uncorrectable ECC errors", node=n, remedy="replace the GPU")
                 for n in nodes[:2]]
    lines = report.render_markdown({**DOC, "verdicts": verdicts, "versions": {}}).splitlines()
    fix = lines[lines.index("## What to fix"):lines.index("## Every verdict")]
    headings = [line for line in fix if line.startswith("### ")]
    if count == 8:
        assert headings == ["### FAIL cluster_node_xid @ gpu-a00", "### FAIL cluster_node_xid @ gpu-a01",
                            "### FAIL gpu_node_ecc on 2 nodes"]
        assert "Nodes: gpu-a00, gpu-a01" in fix and fix.count("Fix: replace the GPU") == 1
    else:
        assert headings == ["### FAIL cluster_node_xid @ gpu-a00", "### FAIL cluster_node_xid @ gpu-a01",
                            "### FAIL gpu_node_ecc @ gpu-a00", "### FAIL gpu_node_ecc @ gpu-a01"]
        assert fix.count("Fix: replace the GPU") == 2


# --- files: report.json / report.md and the history copy ---------------------------------------------------------

def _doc(**changes: object) -> dict[str, object]:
    return {**DOC, "created": "2026-12-02T10:00:00+00:00", **changes}


def test_rules_table_report_write_scrubs_both_files(tmp_path):
    doc = _doc(verdicts=[_verdict("FAIL", "recipe_no_inline_secrets", f"HF_TOKEN={TOKEN} in argv")])
    json_path, md_path = report.write(doc, tmp_path / "out" / "run")
    assert (json_path, md_path) == (tmp_path / "out/run/report.json", tmp_path / "out/run/report.md")
    written = json_path.read_text(encoding="utf-8")
    assert written.endswith("}\n") and written.startswith('{\n  "go": false,')
    assert TOKEN not in written and TOKEN not in md_path.read_text(encoding="utf-8")
    scrubbed = json.loads(written)
    assert scrubbed["verdicts"][0]["summary"] == "HF_TOKEN=<redacted:hf-token> in argv"
    assert md_path.read_text(encoding="utf-8") == report.render_markdown(scrubbed)
    report.write(_doc(), tmp_path / "out" / "run")  # an existing folder: written again
    assert json.loads(json_path.read_text(encoding="utf-8"))["verdicts"] == DOC["verdicts"]


@pytest.mark.parametrize(("changes", "name"), [
    ({}, "report-2026-12-02T100000Z-h200.json"),
    ({"hardware": {"profile": None, "evidence": "none"}}, "report-2026-12-02T100000Z-none.json"),
    ({"hardware": None}, "report-2026-12-02T100000Z-none.json"),
    ({"created": "2026-12-02T10:00:00+01:00"}, "report-2026-12-02T100000+0100-h200.json"),
])
def test_rules_table_report_keep_names_the_copy(tmp_path, changes, name):
    doc = _doc(**changes)
    doc.pop("hardware") if changes.get("hardware", 1) is None else None
    path = report.keep(doc, tmp_path / "hist" / "a")
    assert path == tmp_path / "hist" / "a" / name
    assert path.read_text(encoding="utf-8").endswith("}\n") and json.loads(path.read_text())["decision"] == \
        DOC["decision"]


def test_rules_table_report_keep_never_overwrites_and_scrubs(tmp_path):
    doc = _doc(verdicts=[_verdict("FAIL", "recipe_no_inline_secrets", f"token {TOKEN}")])
    paths = [report.keep(doc, tmp_path) for _ in range(3)]
    assert [p.name for p in paths] == ["report-2026-12-02T100000Z-h200.json", "report-2026-12-02T100000Z-h200-1.json",
                                       "report-2026-12-02T100000Z-h200-2.json"]
    assert all(TOKEN not in p.read_text(encoding="utf-8") for p in paths)
    assert json.loads(paths[0].read_text())["verdicts"][0]["summary"] == "token <redacted:hf-token>"
    assert paths[0].read_text().startswith('{\n  "go": false,')


CHILD = """
import codecs, json, locale, sys
from pathlib import Path
from rlcheck import report
print(codecs.lookup(locale.getpreferredencoding(False)).name)
doc = json.loads(sys.stdin.read())
report.write(doc, Path(sys.argv[1]))
print(report.keep(doc, Path(sys.argv[2])).name)
"""


def test_rules_table_report_files_are_utf_8_whatever_the_locale(tmp_path):
    # a node whose locale is plain ASCII (LC_ALL=C, Python's UTF-8 mode off): both files are UTF-8 all the same
    summary = "NVRM: Xid 79, GPU has fallen off the bus \u2026 (3 times \u2265 1)"
    doc = _doc(verdicts=[_verdict("FAIL", "cluster_node_xid", summary, node="gpu-a01")])
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    child = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "out"), str(tmp_path / "hist")],
                           input=json.dumps(doc), env=env, capture_output=True, text=True, timeout=60)
    assert child.returncode == 0, child.stderr
    encoding, kept = child.stdout.split()
    assert encoding == "ascii"  # the child did write under an ASCII locale
    md = (tmp_path / "out" / "report.md").read_bytes().decode("utf-8")
    assert f"| FAIL | cluster_node_xid @ gpu-a01 | {summary} |  |" in md.splitlines()
    for path in (tmp_path / "out" / "report.json", tmp_path / "hist" / kept):
        assert json.loads(path.read_bytes().decode("utf-8"))["verdicts"][0]["summary"] == summary


def test_rules_table_report_write_is_utf_8_when_the_default_encoding_is_ascii(tmp_path, monkeypatch):
    """The same rule in this process (the one whose calls mutation testing sees): a text file written with no
    encoding named gets ASCII here, as under LC_ALL=C; report.md is UTF-8 all the same."""
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "ascii")
    with pytest.raises(UnicodeEncodeError):  # the condition holds: a file written with the default is ASCII
        (tmp_path / "probe.md").write_text("\u2026")
    summary = "NVRM: Xid 79, GPU has fallen off the bus \u2026 (3 times \u2265 1)"
    _, md_path = report.write(_doc(verdicts=[_verdict("FAIL", "cluster_node_xid", summary, node="gpu-a01")]),
                              tmp_path / "out")
    assert f"| FAIL | cluster_node_xid @ gpu-a01 | {summary} |  |" in md_path.read_bytes().decode("utf-8").splitlines()


def test_rules_table_report_keep_gives_up_after_1000_of_one_second(tmp_path):
    stamp = "report-2026-12-02T100000Z-h200"
    (tmp_path / f"{stamp}.json").write_text("{}")
    for n in range(1, 999):
        (tmp_path / f"{stamp}-{n}.json").write_text("{}")
    assert report.keep(_doc(), tmp_path).name == f"{stamp}-999.json"  # the 1000th
    with pytest.raises(FileExistsError) as exc:
        report.keep(_doc(), tmp_path)
    assert str(exc.value) == f"{tmp_path}: 1000 reports from the same second and hardware already there"
