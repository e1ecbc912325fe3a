"""The constraints of the common JUnit schema that rlcheck's JUnit XML is held to, written out as a small
validator (no lxml / xmlschema in the environment): Jenkins' junit-10.xsd (jenkinsci/xunit-plugin, the schema
pytest's default junit_family "xunit2" targets and pytest's own tests validate with).

What it says, and what is checked here:
- the root is `testsuites` (children: `testsuite` only; attributes name, time, tests, failures, errors) or a
  `testsuite`;
- a `testsuite` has children `testsuite`, `properties`, `testcase`, `system-out`, `system-err` only; attributes name,
  tests, failures, errors are required, the others among group, time, skipped, timestamp, hostname, id, package,
  file, log, url, version; time matches SUREFIRE_TIME;
- `properties` holds `property` elements only, each with exactly the required attributes name and value;
- a `testcase` has children `skipped`, `error` (`errors` in some copies of the file), `failure`, rerun/flaky
  elements, `system-out`, `system-err`: **no `properties`** (the 67 errors of issue 32); attributes name (required),
  time, classname, group;
- `failure`, `error`, `skipped` carry only type and message.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")
SUITE_ATTRS = {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname", "id",
               "package", "file", "log", "url", "version"}
SUITE_REQUIRED = {"name", "tests", "failures", "errors"}
SUITE_CHILDREN = {"testsuite", "properties", "testcase", "system-out", "system-err"}
CASE_ATTRS = {"name", "time", "classname", "group"}
CASE_CHILDREN = {"skipped", "error", "errors", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError",
                 "system-out", "system-err"}
OUTCOME_ATTRS = {"type", "message"}


def _attrs(element: ET.Element, allowed: set[str], required: set[str], where: str) -> list[str]:
    errors = [f"{where}: attribute {a!r} is not allowed" for a in sorted(set(element.attrib) - allowed)]
    return errors + [f"{where}: attribute {a!r} is required" for a in sorted(required - set(element.attrib))]


def _suite(suite: ET.Element, where: str) -> list[str]:
    errors = _attrs(suite, SUITE_ATTRS, SUITE_REQUIRED, where)
    time = suite.get("time")
    if time is not None and not SUREFIRE_TIME.fullmatch(time):
        errors.append(f"{where}: time={time!r} is not a SUREFIRE_TIME")
    for i, child in enumerate(suite):
        here = f"{where}/{child.tag}[{i}]"
        if child.tag not in SUITE_CHILDREN:
            errors.append(f"{here}: element not allowed in a testsuite")
        elif child.tag == "testsuite":
            errors += _suite(child, here)
        elif child.tag == "properties":
            errors += _properties(child, here)
        elif child.tag == "testcase":
            errors += _case(child, f"{here}({child.get('name')})")
    return errors


def _properties(props: ET.Element, where: str) -> list[str]:
    errors = []
    for i, prop in enumerate(props):
        if prop.tag != "property":
            errors.append(f"{where}/{prop.tag}[{i}]: only property elements are allowed")
        else:
            errors += _attrs(prop, {"name", "value"}, {"name", "value"}, f"{where}/property[{i}]")
    return errors


def _case(case: ET.Element, where: str) -> list[str]:
    errors = _attrs(case, CASE_ATTRS, {"name"}, where)
    for child in case:
        if child.tag not in CASE_CHILDREN:
            errors.append(f"{where}: element {child.tag!r} not allowed in a testcase")
        elif child.tag in ("skipped", "error", "errors", "failure"):
            errors += _attrs(child, OUTCOME_ATTRS, set(), f"{where}/{child.tag}")
    return errors


def schema_errors(root: ET.Element) -> list[str]:
    """Every way the document breaks junit-10.xsd; [] when it validates."""
    if root.tag == "testsuite":
        return _suite(root, "testsuite")
    if root.tag != "testsuites":
        return [f"root element {root.tag!r}: testsuites or testsuite"]
    errors = _attrs(root, {"name", "time", "tests", "failures", "errors"}, set(), "testsuites")
    for i, child in enumerate(root):
        if child.tag != "testsuite":
            errors.append(f"testsuites/{child.tag}[{i}]: only testsuite elements are allowed")
        else:
            errors += _suite(child, f"testsuites/testsuite[{i}]")
    return errors
