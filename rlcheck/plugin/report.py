"""Collects verdicts from tests (also across xdist workers) and ends every run with GO / NO-GO."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from rlcheck import report
from rlcheck.framework.detect import Installed
from rlcheck.plugin.options import get_context
from rlcheck.repro.reproduce import Reproduction, judge
from rlcheck.verdict import Status, Verdict

PROPERTY = "rlcheck_verdict"
KINDS = {"checks": "check", "reproducers": "reproducer", "testcases": "case"}


def framework_context(framework: Installed | None) -> dict[str, Any]:
    """The report's statement of the framework judged: name, version, how it was known, and one line."""
    if framework is None:
        return {"name": None, "version": None, "source": "", "judged": "not detected"}
    return {"name": framework.framework, "version": framework.version, "source": framework.source,
            "judged": framework.describe()}


def kind_of(nodeid: str) -> str:
    return KINDS.get(nodeid.split("/", 1)[0], "test")


def verdict_id(nodeid: str) -> str:
    """A check's id is its registry id, the param of its area's test (checks/test_recipe.py::test_recipe[recipe_batch]
    -> recipe_batch); elsewhere the test's name (test_repro_numpy2_megatron -> repro_numpy2_megatron)."""
    name = nodeid.rsplit("::", 1)[-1]
    if kind_of(nodeid) == "check" and name.endswith("]"):
        return name[name.index("[") + 1:-1]
    return name.removeprefix("test_")


@pytest.fixture
def record_verdict(request: pytest.FixtureRequest) -> Callable[..., None]:
    """Record verdicts for the report; then skip on SKIP and fail on FAIL / UNKNOWN with verdict.render()."""

    def record(*verdicts: Verdict, reproduction: dict[str, Any] | None = None) -> None:
        item = request.node
        named = [v.with_id(verdict_id(item.nodeid)) for v in verdicts]
        for v in named:
            item.user_properties.append((PROPERTY, json.dumps({"verdict": v.to_dict(), "reproduction": reproduction})))
        bad = [v for v in named if v.status.blocks]
        if bad:
            pytest.fail("\n".join(v.render() for v in bad), pytrace=False)
        if named and all(v.status is Status.SKIP for v in named):
            pytest.skip(named[0].summary)

    return record


@pytest.fixture
def record_reproduction(record_verdict: Callable[..., None]) -> Callable[[Reproduction], None]:
    """A reproducer's one closing line: judge its Reproduction against the catalogue's range and record it."""

    def record(result: Reproduction) -> None:
        verdict, state = judge(result)
        record_verdict(verdict, reproduction=state)

    return record


def synthesized(rep: pytest.TestReport) -> Verdict | None:
    """The verdict of a check or reproducer that ended without recording one."""
    check_id = verdict_id(rep.nodeid)
    if rep.skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        return Verdict(check_id=check_id, status=Status.SKIP, summary=reason.removeprefix("Skipped: "))
    if rep.failed:
        crash = getattr(rep.longrepr, "reprcrash", None)
        last = crash.message.splitlines()[0] if crash else (str(rep.longrepr).strip().splitlines() or ["?"])[-1]
        return Verdict(check_id=check_id, status=Status.UNKNOWN, summary=f"could not run ({rep.when}): {last}",
                       details=str(rep.longrepr)[-4000:])
    if rep.when == "call":
        return Verdict(check_id=check_id, status=Status.UNKNOWN, summary="the test recorded no verdict")
    return None


class VerdictCollector:
    """Lives on the controller: gathers verdicts from every report, writes the files, prints the summary."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.recorded: list[report.Recorded] = []
        self.done: set[str] = set()
        self.decision: report.Decision | None = None
        self.paths: tuple[str, ...] = ()

    def _add(self, payload: dict[str, Any], nodeid: str) -> None:
        verdict = Verdict.from_dict(payload["verdict"])
        self.recorded.append(report.Recorded(verdict=verdict, kind=kind_of(nodeid), test_id=nodeid,
                                             reproduction=payload.get("reproduction")))
        self.done.add(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if kind_of(report.nodeid) == "test" or report.nodeid in self.done:
            return
        payloads = [json.loads(str(v)) for k, v in report.user_properties if k == PROPERTY]
        for payload in payloads:
            self._add(payload, report.nodeid)
        if payloads or (report.passed and report.when != "call"):
            return
        verdict = synthesized(report)
        if verdict is not None:
            self._add({"verdict": verdict.to_dict()}, report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        ctx = get_context(self.config)
        if ctx.hardware_unknown and self.recorded:
            self.recorded.insert(0, report.detection_unknown(ctx.hardware_unknown))
        if not self.recorded:
            return
        hw = ctx.profile.name if ctx.profile else "none"
        self.decision = report.decide(self.recorded, ctx.subject, hw)
        context = {"hardware": {"requested": ctx.hardware_requested, "profile": hw,
                                "evidence": ctx.hardware_evidence},
                   "recipe": ctx.recipe, "ray_address": ctx.ray_address,
                   "framework": framework_context(ctx.framework),
                   "job": {"path": ctx.job_path, "format": ctx.job_format, "error": ctx.job_error} if ctx.job_path
                   else None}
        doc = report.build_document(self.recorded, self.decision, context)
        status = report.exit_status(self.recorded)
        try:
            self.paths = tuple(str(p) for p in report.write(doc, ctx.report_dir))
        except OSError as exc:  # the report is the product: a run that could not write it fails
            why = f"could not write the report to {ctx.report_dir}: {exc.strerror or exc}"
            self.paths = (why,)
            self.decision = report.Decision(go=False, line=f"NO-GO: {why} (the checks said: {self.decision.line})")
            status = report.EXIT_UNJUDGED
        if status != report.EXIT_GO:
            session.exitstatus = status

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.decision is None:
            return
        tr = terminalreporter
        tr.section("rlcheck verdicts")
        ctx = get_context(self.config)
        tr.write_line(f"hardware: {ctx.hardware_evidence}")
        tr.write_line(f"framework: {ctx.framework.describe() if ctx.framework else 'not detected'}")
        for line in report.summary_lines(self.recorded):
            tr.write_line(line)
        tr.write_line(f"report: {', '.join(self.paths)}")
        tr.write_line(f"rlcheck {self.decision.line}", bold=True, green=self.decision.go, red=not self.decision.go)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # xdist workers send their reports to the controller
        config.pluginmanager.register(VerdictCollector(config), "rlcheck-verdict-collector")
