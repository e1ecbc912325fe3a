"""JUnit XML (`--junitxml`) that CI tools show well and that validates against the common JUnit schema (Jenkins'
junit-10.xsd, which pytest's default junit_family xunit2 follows): one testcase per node for per-node checks
(`test_cluster[cluster_node_xid]@node-a`), GO / NO-GO as testsuite properties, and each verdict as readable
`name: value` lines in its testcase's system-out and as testsuite properties named `<testcase>::<name>`. That schema
allows properties on a testsuite only, so the per-test properties pytest writes (record_property, user_properties)
are moved there, never left on a testcase."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _pytest import junitxml  # its xml_key: the one way to reach the LogXML object (its logfile, global properties)

from rlcheck import report, secret_guard
from rlcheck.verdict import Status, Verdict

BLOCKS = {s.value for s in Status if s.blocks}
VERDICT_KEYS = ("rlcheck_status", "rlcheck_summary", "rlcheck_node")


def verdict_properties(verdict: Verdict) -> list[tuple[str, str]]:
    """What a CI tool shows of a verdict: one readable property each, in the order status, summary, node."""
    props = [("rlcheck_status", verdict.status.value), ("rlcheck_summary", verdict.summary)]
    props = [*props, ("rlcheck_node", verdict.node)] if verdict.node else props
    return [(name, secret_guard.scrub_text(value)) for name, value in props]  # never a secret in the XML


def suite_properties(config: pytest.Config, decision: report.Decision) -> None:
    """GO / NO-GO as JUnit testsuite properties, where CI tools show them for the whole run."""
    xml = config.stash.get(junitxml.xml_key, None)
    if xml is not None:
        xml.add_global_property("rlcheck_decision", "GO" if decision.go else "NO-GO" if decision.judged else "none")
        xml.add_global_property("rlcheck_decision_line", secret_guard.scrub_text(decision.line))


def _verdicts(case: ET.Element) -> list[dict[str, str]]:
    """The verdicts a testcase's properties carry, each a status, a summary and, for a per-node one, a node."""
    found: list[dict[str, str]] = []
    for prop in case.findall("properties/property"):
        name, value = prop.get("name", ""), prop.get("value", "")
        if name == "rlcheck_status":
            found.append({})
        if name in VERDICT_KEYS and found:
            found[-1][name] = value
    return found


def _node_case(case: ET.Element, node: str, verdicts: list[dict[str, str]]) -> ET.Element:
    """The testcase of one node: that node's verdicts, a failure when one of them is FAIL or UNKNOWN, and the
    test's own output and errors (which belong to every node it judged)."""
    out = ET.Element("testcase", {**case.attrib, "name": f"{case.get('name')}@{node}"})
    props = ET.SubElement(out, "properties")
    for v in verdicts:
        for key in VERDICT_KEYS:
            if key in v:
                ET.SubElement(props, "property", name=key, value=v[key])
    bad = [v for v in verdicts if v["rlcheck_status"] in BLOCKS]
    if bad:
        failure = ET.SubElement(out, "failure", message="; ".join(f"{v['rlcheck_status']} [{node}]: "
                                                                   f"{v.get('rlcheck_summary', '')}" for v in bad))
        failure.text = "\n".join(f"{v['rlcheck_status']} {case.get('name')} [{node}]: {v.get('rlcheck_summary', '')}"
                                 for v in bad)
    elif all(v["rlcheck_status"] == Status.SKIP.value for v in verdicts):
        ET.SubElement(out, "skipped", type="pytest.skip", message=verdicts[0].get("rlcheck_summary", ""))
    out.extend(child for child in case if child.tag in ("error", "system-out", "system-err"))
    return out


def _split(case: ET.Element) -> list[ET.Element] | None:
    """One testcase per node when the test recorded per-node verdicts; None leaves the testcase as it is."""
    verdicts = _verdicts(case)
    by_node: dict[str, list[dict[str, str]]] = {}
    for v in verdicts:
        by_node.setdefault(v.get("rlcheck_node", ""), []).append(v)
    if "" in by_node or not by_node:  # a verdict of the whole test (or none): not a per-node check
        return None
    return [_node_case(case, node, node_verdicts) for node, node_verdicts in by_node.items()]


def _count(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    for attr, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        suite.set(attr, str(sum(c.find(tag) is not None for c in cases)))


def split_per_node(path: Path) -> bool:
    """Rewrite the JUnit file with one testcase per node for per-node checks, and the suite's counts to match.
    False when there was nothing to split (the file is left untouched)."""
    tree = ET.parse(path)
    changed = False
    for suite in tree.getroot().iter("testsuite"):
        split = False
        for index, case in reversed(list(enumerate(suite))):
            if case.tag == "testcase" and (cases := _split(case)) is not None:
                suite[index:index + 1] = cases
                split = True
        if split:
            _count(suite)
        changed = changed or split
    if changed:
        tree.write(path, encoding="utf-8", xml_declaration=True)
    return changed


def _suite_properties(suite: ET.Element) -> ET.Element:
    found = suite.find("properties")
    if found is None:
        found = ET.Element("properties")
        suite.insert(0, found)
    return found


def _case_properties_to_suite(suite: ET.Element) -> bool:
    """Each testcase's properties as `name: value` lines leading its system-out, and as testsuite properties
    `<testcase name>::<name>`; the testcase keeps none (junit-10.xsd has no properties in a testcase)."""
    moved = False
    for case in suite.findall("testcase"):
        props = case.findall("properties")
        rows = [(p.get("name", ""), p.get("value", "")) for element in props for p in element.findall("property")]
        for element in props:
            case.remove(element)
        if not rows:
            moved = moved or bool(props)
            continue
        out = case.find("system-out")
        if out is None:
            out = ET.SubElement(case, "system-out")
        lines = "\n".join(f"{name}: {value}" for name, value in rows)
        out.text = f"{lines}\n\n{out.text}" if out.text else lines + "\n"
        _suite_properties(suite).extend(ET.Element("property", name=f"{case.get('name')}::{name}", value=value)
                                        for name, value in rows)
        moved = True
    return moved


def to_schema(path: Path) -> bool:
    """Rewrite the JUnit file so that no testcase carries properties (see the module's docstring); False when none
    did (the file is left untouched)."""
    tree = ET.parse(path)
    changed = False
    for suite in tree.getroot().iter("testsuite"):
        changed = _case_properties_to_suite(suite) or changed
    if changed:
        tree.write(path, encoding="utf-8", xml_declaration=True)
    return changed


@pytest.hookimpl(trylast=True)  # after the junitxml plugin has written its file
def pytest_sessionfinish(session: pytest.Session) -> None:
    xml = session.config.stash.get(junitxml.xml_key, None)
    if xml is not None and Path(xml.logfile).is_file():
        split_per_node(Path(xml.logfile))  # reads the verdicts from the testcases' properties, so it goes first
        to_schema(Path(xml.logfile))
