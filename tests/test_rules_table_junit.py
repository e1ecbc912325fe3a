"""The JUnit rewrite as a table (rlcheck.plugin.junit.split_per_node on written files): a per-node check becomes one
testcase per node carrying that node's verdicts, failing on FAIL / UNKNOWN, skipped when all SKIP, with the test's
own output; the suite's counts follow; a whole-test verdict and a file with nothing to split stay as they were."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from _pytest import junitxml

from rlcheck import report
from rlcheck.plugin import junit
from rlcheck.verdict import Status, Verdict


def _props(*verdicts: tuple[str, ...], extra: tuple[str, str] | None = None) -> str:
    rows = [f'<property name="{extra[0]}" value="{extra[1]}"/>'] if extra else []
    for v in verdicts:
        rows += [f'<property name="rlcheck_status" value="{v[0]}"/>', f'<property name="rlcheck_summary" '
                 f'value="{v[1]}"/>', *([f'<property name="rlcheck_node" value="{v[2]}"/>'] if len(v) > 2 else [])]
    return f"<properties>{''.join(rows)}</properties>"


XID_PROPS = _props(("FAIL", "Xid 79", "node-a"), ("PASS", "clean", "node-b"), ("UNKNOWN", "log unread", "node-a"),
                   extra=("other", "kept out"))
SHM_PROPS = _props(("SKIP", "no profile for node-c", "node-c"), ("SKIP", "no profile again", "node-c"),
                   ("WARN", "small", "node-d"))
XID = (f'<testcase classname="checks.test_cluster" name="test_cluster[cluster_node_xid]" time="1.5">{XID_PROPS}'
       "<system-out>fan-out log</system-out><system-err>warning</system-err></testcase>")
SHM = (f'<testcase classname="checks.test_cluster" name="test_cluster[cluster_node_shm]" time="0.1">{SHM_PROPS}'
       "</testcase>")
WHOLE = (f'<testcase classname="checks.test_cluster" name="test_cluster[cluster_reachable]" time="0.2">'
         f'{_props(("PASS", "reached"))}</testcase>')
PLAIN = '<testcase classname="tests.test_x" name="test_plain" time="0.0"/>'
ERRORED = (f'<testcase classname="checks.test_cluster" name="test_cluster[cluster_node_gpus]" time="0.3">'
           f'{_props(("PASS", "8 GPUs", "node-a"))}<error message="teardown">boom</error></testcase>')


def _write(tmp_path, *suites: str) -> ET.Element:
    path = tmp_path / "junit.xml"
    path.write_text(f'<?xml version="1.0" encoding="utf-8"?><testsuites>{"".join(suites)}</testsuites>')
    return path


def _suite(*cases: str, name: str = "pytest") -> str:
    return f'<testsuite name="{name}" tests="99" failures="99" errors="99" skipped="99">{"".join(cases)}</testsuite>'


def _cases(path) -> list[tuple[str, dict[str, str], list[tuple[str, str]], list[tuple[str, dict[str, str], str]]]]:
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = [(p.get("name"), p.get("value")) for p in case.findall("properties/property")]
        children = [(c.tag, dict(c.attrib), c.text or "") for c in case if c.tag != "properties"]
        out.append((case.get("name"), {k: v for k, v in case.attrib.items() if k != "name"}, props, children))
    return out


def _counts(path) -> list[dict[str, str]]:
    return [{k: s.get(k) for k in ("name", "tests", "failures", "errors", "skipped")}
            for s in ET.parse(path).getroot().iter("testsuite")]


ATTRS = {"classname": "checks.test_cluster"}


def test_rules_table_junit_splits_per_node_checks_and_recounts(tmp_path):
    path = _write(tmp_path, _suite(XID, WHOLE, SHM, PLAIN, ERRORED), _suite(WHOLE, name="untouched"))
    assert junit.split_per_node(path) is True
    out = "fan-out log"
    assert _cases(path) == [
        ("test_cluster[cluster_node_xid]@node-a", {**ATTRS, "time": "1.5"},
         [("rlcheck_status", "FAIL"), ("rlcheck_summary", "Xid 79"), ("rlcheck_node", "node-a"),
          ("rlcheck_status", "UNKNOWN"), ("rlcheck_summary", "log unread"), ("rlcheck_node", "node-a")],
         [("failure", {"message": "FAIL [node-a]: Xid 79; UNKNOWN [node-a]: log unread"},
           "FAIL test_cluster[cluster_node_xid] [node-a]: Xid 79\n"
           "UNKNOWN test_cluster[cluster_node_xid] [node-a]: log unread"),
          ("system-out", {}, out), ("system-err", {}, "warning")]),
        ("test_cluster[cluster_node_xid]@node-b", {**ATTRS, "time": "1.5"},
         [("rlcheck_status", "PASS"), ("rlcheck_summary", "clean"), ("rlcheck_node", "node-b")],
         [("system-out", {}, out), ("system-err", {}, "warning")]),
        ("test_cluster[cluster_reachable]", {**ATTRS, "time": "0.2"},
         [("rlcheck_status", "PASS"), ("rlcheck_summary", "reached")], []),
        ("test_cluster[cluster_node_shm]@node-c", {**ATTRS, "time": "0.1"},
         [("rlcheck_status", "SKIP"), ("rlcheck_summary", "no profile for node-c"), ("rlcheck_node", "node-c"),
          ("rlcheck_status", "SKIP"), ("rlcheck_summary", "no profile again"), ("rlcheck_node", "node-c")],
         [("skipped", {"type": "pytest.skip", "message": "no profile for node-c"}, "")]),
        ("test_cluster[cluster_node_shm]@node-d", {**ATTRS, "time": "0.1"},
         [("rlcheck_status", "WARN"), ("rlcheck_summary", "small"), ("rlcheck_node", "node-d")], []),
        ("test_plain", {"classname": "tests.test_x", "time": "0.0"}, [], []),
        ("test_cluster[cluster_node_gpus]@node-a", {**ATTRS, "time": "0.3"},
         [("rlcheck_status", "PASS"), ("rlcheck_summary", "8 GPUs"), ("rlcheck_node", "node-a")],
         [("error", {"message": "teardown"}, "boom")]),
        ("test_cluster[cluster_reachable]", {**ATTRS, "time": "0.2"},
         [("rlcheck_status", "PASS"), ("rlcheck_summary", "reached")], []),
    ]
    assert _counts(path) == [
        {"name": "pytest", "tests": "7", "failures": "1", "errors": "1", "skipped": "1"},
        {"name": "untouched", "tests": "99", "failures": "99", "errors": "99", "skipped": "99"},  # nothing split
    ]
    assert path.read_text(encoding="utf-8").startswith("<?xml version='1.0' encoding='utf-8'?>")


def test_rules_table_junit_nothing_to_split_leaves_the_file_untouched(tmp_path):
    path = _write(tmp_path, _suite(WHOLE, PLAIN))
    before = path.read_bytes()
    assert junit.split_per_node(path) is False
    assert path.read_bytes() == before


def test_rules_table_junit_a_node_verdict_beside_a_whole_test_verdict_is_not_split(tmp_path):
    mixed = (f'<testcase classname="c" name="t" time="0">'
             f'{_props(("FAIL", "node fault", "node-a"), ("PASS", "whole"))}</testcase>')
    path = _write(tmp_path, _suite(mixed))
    assert junit.split_per_node(path) is False
    assert [c[0] for c in _cases(path)] == ["t"]


def test_rules_table_junit_properties_before_a_status_are_not_a_verdict(tmp_path):
    stray = ('<testcase classname="c" name="t" time="0"><properties><property name="rlcheck_node" value="node-z"/>'
             '<property name="rlcheck_summary" value="orphan"/></properties></testcase>')
    path = _write(tmp_path, _suite(stray))
    assert junit.split_per_node(path) is False


def test_rules_table_junit_a_failing_verdict_without_summary_says_nothing_more(tmp_path):
    bare = ('<testcase classname="c" name="t" time="0"><properties><property name="rlcheck_status" value="FAIL"/>'
            '<property name="rlcheck_node" value="node-a"/></properties></testcase>')
    path = _write(tmp_path, _suite(bare))
    assert junit.split_per_node(path) is True
    failure = ET.parse(path).getroot().find("testsuite/testcase/failure")
    assert (failure.get("message"), failure.text) == ("FAIL [node-a]: ", "FAIL t [node-a]: ")


BARE_ROWS = [
    # (the testcase's properties: a property without its value attribute, or none at all, as another tool may write
    # them), (the node's testcase: its properties, its failure or skipped element)
    ('<property name="rlcheck_status" value="FAIL"/><property name="rlcheck_summary"/>'
     '<property name="rlcheck_node" value="node-a"/>',
     ([("rlcheck_status", "FAIL"), ("rlcheck_summary", ""), ("rlcheck_node", "node-a")],
      [("failure", {"message": "FAIL [node-a]: "}, "FAIL t [node-a]: ")])),
    ('<property name="rlcheck_status" value="SKIP"/><property name="rlcheck_summary"/>'
     '<property name="rlcheck_node" value="node-a"/>',
     ([("rlcheck_status", "SKIP"), ("rlcheck_summary", ""), ("rlcheck_node", "node-a")],
      [("skipped", {"type": "pytest.skip", "message": ""}, "")])),
    ('<property name="rlcheck_status" value="SKIP"/><property name="rlcheck_node" value="node-a"/>',
     ([("rlcheck_status", "SKIP"), ("rlcheck_node", "node-a")], [("skipped", {"type": "pytest.skip", "message": ""},
                                                                  "")])),
]


@pytest.mark.parametrize(("props", "expected"), BARE_ROWS, ids=["fail-empty-summary", "skip-empty-summary",
                                                                 "skip-no-summary"])
def test_rules_table_junit_a_summary_without_value_is_empty_never_none(tmp_path, props, expected):
    path = _write(tmp_path, _suite(f'<testcase classname="c" name="t" time="0"><properties>{props}</properties>'
                                   "</testcase>"))
    assert junit.split_per_node(path) is True
    ((name, attrs, got_props, children),) = _cases(path)
    assert (name, attrs, got_props, children) == ("t@node-a", {"classname": "c", "time": "0"}, *expected)
    assert _counts(path)[0]["tests"] == "1"


STRAY = ('<testcase classname="c" name="t" time="0"><properties><property name="rlcheck_status" value="FAIL"/>'
         '<property name="rlcheck_summary" value="Xid 79"/><property name="rlcheck_node" value="node-a"/>'
         '</properties></testcase>')


@pytest.mark.parametrize("rewrite", [junit.split_per_node, junit.to_schema], ids=["split", "to_schema"])
def test_rules_table_junit_a_testcase_outside_any_testsuite_is_left_alone(tmp_path, rewrite):
    # only a testsuite's testcases are JUnit's: one straight under <testsuites> is neither split nor moved
    path = _write(tmp_path, STRAY, _suite(PLAIN))
    before = path.read_bytes()
    assert rewrite(path) is False
    assert path.read_bytes() == before


def test_rules_table_junit_a_file_without_a_testsuite_has_nothing_to_split(tmp_path):
    path = _write(tmp_path)
    assert junit.split_per_node(path) is False  # False, as documented: not merely falsy
    assert path.read_bytes() == b'<?xml version="1.0" encoding="utf-8"?><testsuites></testsuites>'


# --- to the schema: no properties in a testcase ------------------------------------------------------------------

def _tree(path) -> list[tuple[str, dict[str, str], str]]:
    """Every element below the root in document order: its tag, attributes and text."""
    return [(e.tag, dict(e.attrib), e.text or "") for e in ET.parse(path).getroot().iter() if e.tag != "testsuites"]


def test_rules_table_junit_to_schema_moves_case_properties_to_the_suite(tmp_path):
    with_out = ('<testcase classname="c" name="t1" time="0"><properties><property name="rlcheck_status" value="FAIL"/>'
                '<property name="rlcheck_summary" value="Xid 79"/></properties><system-out>log</system-out>'
                '<failure message="m">f</failure></testcase>')
    no_out = ('<testcase classname="c" name="t2" time="0"><properties><property name="a"/></properties>'
              '<properties><property name="b" value="2"/></properties></testcase>')
    empty_out = ('<testcase classname="c" name="t3" time="0"><properties><property name="k" value="v"/></properties>'
                 '<system-out/></testcase>')
    suite = ('<testsuite name="pytest" tests="3"><properties><property name="rlcheck_decision" value="NO-GO"/>'
             f'</properties>{with_out}{no_out}{empty_out}</testsuite>')
    path = _write(tmp_path, suite)
    assert junit.to_schema(path) is True
    assert _tree(path) == [
        ("testsuite", {"name": "pytest", "tests": "3"}, ""),
        ("properties", {}, ""),
        ("property", {"name": "rlcheck_decision", "value": "NO-GO"}, ""),
        ("property", {"name": "t1::rlcheck_status", "value": "FAIL"}, ""),
        ("property", {"name": "t1::rlcheck_summary", "value": "Xid 79"}, ""),
        ("property", {"name": "t2::a", "value": ""}, ""),
        ("property", {"name": "t2::b", "value": "2"}, ""),
        ("property", {"name": "t3::k", "value": "v"}, ""),
        ("testcase", {"classname": "c", "name": "t1", "time": "0"}, ""),
        ("system-out", {}, "rlcheck_status: FAIL\nrlcheck_summary: Xid 79\n\nlog"),
        ("failure", {"message": "m"}, "f"),
        ("testcase", {"classname": "c", "name": "t2", "time": "0"}, ""),
        ("system-out", {}, "a: \nb: 2\n"),
        ("testcase", {"classname": "c", "name": "t3", "time": "0"}, ""),
        ("system-out", {}, "k: v\n"),
    ]
    assert path.read_text(encoding="utf-8").startswith("<?xml version='1.0' encoding='utf-8'?>")


def test_rules_table_junit_to_schema_makes_the_suites_properties_first(tmp_path):
    case = ('<testcase classname="c" name="t" time="0"><properties><property name="k" value="v"/></properties>'
            '</testcase>')
    path = _write(tmp_path, f'<testsuite name="s">{PLAIN}{case}</testsuite>')
    assert junit.to_schema(path) is True
    suite = ET.parse(path).getroot().find("testsuite")
    assert [c.tag for c in suite] == ["properties", "testcase", "testcase"]
    assert [(p.get("name"), p.get("value")) for p in suite.findall("properties/property")] == [("t::k", "v")]


def test_rules_table_junit_to_schema_a_nameless_property_keeps_an_empty_name(tmp_path):
    case = ('<testcase classname="c" name="t" time="0"><properties><property value="slime 0.3.1"/>'
            '<property name="k" value="v"/></properties></testcase>')
    path = _write(tmp_path, f'<testsuite name="s">{case}</testsuite>')
    assert junit.to_schema(path) is True
    assert _tree(path) == [("testsuite", {"name": "s"}, ""), ("properties", {}, ""),
                           ("property", {"name": "t::", "value": "slime 0.3.1"}, ""),
                           ("property", {"name": "t::k", "value": "v"}, ""),
                           ("testcase", {"classname": "c", "name": "t", "time": "0"}, ""),
                           ("system-out", {}, ": slime 0.3.1\nk: v\n")]


def test_rules_table_junit_to_schema_drops_empty_case_properties(tmp_path):
    case = '<testcase classname="c" name="t" time="0"><properties/></testcase>'
    path = _write(tmp_path, f'<testsuite name="s">{case}{PLAIN}</testsuite>')
    assert junit.to_schema(path) is True
    assert _tree(path) == [("testsuite", {"name": "s"}, ""), ("testcase", {"classname": "c", "name": "t", "time": "0"},
                                                                  ""),
                           ("testcase", {"classname": "tests.test_x", "name": "test_plain", "time": "0.0"}, "")]


@pytest.mark.parametrize("suites", [(_suite(PLAIN),), (_suite(PLAIN), _suite(PLAIN, name="b")), ()])
def test_rules_table_junit_to_schema_leaves_a_file_without_case_properties(tmp_path, suites):
    path = _write(tmp_path, *suites)
    before = path.read_bytes()
    assert junit.to_schema(path) is False
    assert path.read_bytes() == before


def test_rules_table_junit_to_schema_in_the_second_suite_only(tmp_path):
    case = ('<testcase classname="c" name="t" time="0"><properties><property name="k" value="v"/></properties>'
            '</testcase>')
    path = _write(tmp_path, _suite(PLAIN, name="a"), f'<testsuite name="b">{case}</testsuite>')
    assert junit.to_schema(path) is True
    suites = list(ET.parse(path).getroot().iter("testsuite"))
    assert [s.find("properties") is None for s in suites] == [True, False]


# --- verdicts as properties, the decision as suite properties, the session's end --------------------------------

TOKEN = "hf_abcdefghijklmnopqrstuvwxyz0123"


@pytest.mark.parametrize(("verdict", "props"), [
    (Verdict(status=Status.FAIL, summary="Xid 79", node="gpu-a"),
     [("rlcheck_status", "FAIL"), ("rlcheck_summary", "Xid 79"), ("rlcheck_node", "gpu-a")]),
    (Verdict(status=Status.PASS, summary="ok"), [("rlcheck_status", "PASS"), ("rlcheck_summary", "ok")]),
    (Verdict(status=Status.PASS, summary="ok", node=""), [("rlcheck_status", "PASS"), ("rlcheck_summary", "ok")]),
    (Verdict(status=Status.FAIL, summary=f"HF_TOKEN={TOKEN} in argv", node=f"n-{TOKEN}"),
     [("rlcheck_status", "FAIL"), ("rlcheck_summary", "HF_TOKEN=<redacted:hf-token> in argv"),
      ("rlcheck_node", "n-<redacted:hf-token>")]),
])
def test_rules_table_junit_verdict_properties(verdict, props):
    assert junit.verdict_properties(verdict) == props


class LogXML:
    """What suite_properties and the session's end read of pytest's junitxml writer."""

    def __init__(self, logfile: str = "") -> None:
        self.logfile, self.properties = logfile, []

    def add_global_property(self, name: str, value: str) -> None:
        self.properties.append((name, value))


class Config:
    def __init__(self, xml: LogXML | None) -> None:
        self.stash = pytest.Stash()
        if xml is not None:
            self.stash[junitxml.xml_key] = xml


@pytest.mark.parametrize(("decision", "props"), [
    (report.Decision(go=True, line="GO: 1 judged"),
     [("rlcheck_decision", "GO"), ("rlcheck_decision_line", "GO: 1 judged")]),
    (report.Decision(go=False, line=f"NO-GO: x {TOKEN}"),
     [("rlcheck_decision", "NO-GO"), ("rlcheck_decision_line", "NO-GO: x <redacted:hf-token>")]),
    (report.Decision(go=False, judged=False, line="no GO / NO-GO: y"),
     [("rlcheck_decision", "none"), ("rlcheck_decision_line", "no GO / NO-GO: y")]),
])
def test_rules_table_junit_suite_properties(decision, props):
    xml = LogXML()
    junit.suite_properties(Config(xml), decision)  # type: ignore[arg-type]
    assert xml.properties == props
    junit.suite_properties(Config(None), decision)  # type: ignore[arg-type]  # no --junitxml: nothing to do


class Session:
    def __init__(self, config: Config) -> None:
        self.config = config


def test_rules_table_junit_session_end_splits_then_moves_to_the_schema(tmp_path):
    path = _write(tmp_path, _suite(XID))
    junit.pytest_sessionfinish(Session(Config(LogXML(str(path)))))  # type: ignore[arg-type]
    root = ET.parse(path).getroot()
    assert [c.get("name") for c in root.iter("testcase")] == ["test_cluster[cluster_node_xid]@node-a",
                                                              "test_cluster[cluster_node_xid]@node-b"]
    assert all(c.find("properties") is None for c in root.iter("testcase"))
    assert root.find("testsuite/testcase/system-out").text.startswith("rlcheck_status: FAIL\nrlcheck_summary: Xid 79")
    assert ("test_cluster[cluster_node_xid]@node-b::rlcheck_node", "node-b") in [
        (p.get("name"), p.get("value")) for p in root.findall("testsuite/properties/property")]


def test_rules_table_junit_session_end_without_a_file_does_nothing(tmp_path):
    junit.pytest_sessionfinish(Session(Config(LogXML(str(tmp_path / "never-written.xml")))))  # type: ignore[arg-type]
    junit.pytest_sessionfinish(Session(Config(None)))  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
