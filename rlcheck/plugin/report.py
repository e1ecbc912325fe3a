"""Collects verdicts from tests (also across xdist workers) and ends every run with GO / NO-GO."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

from rlcheck import history_band, report
from rlcheck.framework.detect import Installed
from rlcheck.plugin.items import enforced_key, kind_of, kind_of_item, verdicts_key
from rlcheck.plugin.junit import suite_properties, verdict_properties
from rlcheck.plugin.options import get_context
from rlcheck.repro.reproduce import Reproduction, judge
from rlcheck.verdict import Status, Verdict

PLUGIN_DIR = Path(__file__).resolve().parent
history_key = pytest.StashKey[tuple[list[dict[str, Any]], list[str]]]()
"""The reports kept in --history, read once per run (for the band of measured figures)."""


def framework_context(framework: Installed | None, judged: str = "") -> dict[str, Any]:
    """The report's statement of the framework judged: name, version, how it was known, and one line (judged,
    else the framework's own description)."""
    if framework is None:
        return {"name": None, "version": None, "source": "", "judged": judged or "not detected"}
    return {"name": framework.framework, "version": framework.version, "source": framework.source,
            "judged": judged or framework.describe()}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    rep = yield
    rep.rlcheck_kind = kind_of_item(item)  # plain attributes: xdist carries them to the controller
    if call.when == "call":
        rep.rlcheck_verdicts = item.stash[verdicts_key] if verdicts_key in item.stash else []
    _skip_at_the_test(item, rep)
    return rep


def _skip_at_the_test(item: pytest.Item, rep: pytest.TestReport) -> None:
    """A skip raised by rlcheck's plugin (record_verdict, the gates) is reported at the test it skipped."""
    if not (rep.skipped and isinstance(rep.longrepr, tuple)):
        return
    where, _, reason = rep.longrepr
    if Path(item.config.invocation_params.dir, where).resolve().parent != PLUGIN_DIR:
        return
    path, line, _ = item.reportinfo()
    rep.longrepr = (str(path), (line or 0) + 1, reason)


def report_kind(rep: pytest.TestReport) -> str:
    return getattr(rep, "rlcheck_kind", None) or kind_of(rep.nodeid)


def verdict_id(nodeid: str, kind: str | None = None) -> str:
    """A check's id is its registry id, the param of its area's test (checks/test_recipe.py::test_recipe[recipe_batch]
    -> recipe_batch); elsewhere the test's name (test_repro_numpy2_megatron -> repro_numpy2_megatron)."""
    name = nodeid.rsplit("::", 1)[-1]
    if (kind or kind_of(nodeid)) == "check" and name.endswith("]"):
        return name[name.index("[") + 1:-1]
    return name.removeprefix("test_")


@pytest.fixture
def record_verdict(request: pytest.FixtureRequest) -> Callable[..., None]:
    """Record verdicts for the report; then skip on SKIP and fail on FAIL / UNKNOWN with verdict.render()."""

    def record(*verdicts: Verdict, reproduction: dict[str, Any] | None = None) -> None:
        item = request.node
        named = _banded([v.with_id(verdict_id(item.nodeid, kind_of_item(item))) for v in verdicts], item.config)
        stash = item.stash.setdefault(verdicts_key, [])
        for v in named:
            stash.append(json.dumps({"verdict": v.to_dict(), "reproduction": reproduction}))
            item.user_properties.extend(verdict_properties(v))
        try:
            enforce(named)
        except BaseException as exc:  # pytest.fail / pytest.skip: the test ends as its verdicts say
            item.stash[enforced_key] = exc
            raise

    return record


def _banded(verdicts: list[Verdict], config: pytest.Config) -> list[Verdict]:
    """With --history: measured figures judged also against this cluster's band of good runs."""
    ctx = get_context(config)
    if ctx.history_dir is None or ctx.band_runs == 0:
        return verdicts
    if history_key not in config.stash:
        config.stash[history_key] = history_band.read_reports(ctx.history_dir)
    reports, errors = config.stash[history_key]
    return history_band.judge_all(verdicts, reports, errors, profile=ctx.profile.name if ctx.profile else None,
                                  last=ctx.band_runs)


def enforce(verdicts: list[Verdict]) -> None:
    """The verdict contract: a test that records a blocking verdict (FAIL or UNKNOWN) fails with each one's
    render(); one that records only SKIPs is skipped with the first one's summary; anything else passes.
    A reproducer whose side directory is missing records UNKNOWN, so it fails, never passes."""
    bad = [v for v in verdicts if v.status.blocks]
    if bad:
        pytest.fail("\n".join(v.render() for v in bad), pytrace=False)
    if verdicts and all(v.status is Status.SKIP for v in verdicts):
        pytest.skip(verdicts[0].summary)


@pytest.fixture
def record_reproduction(record_verdict: Callable[..., None]) -> Callable[[Reproduction], None]:
    """A reproducer's one closing line: judge its Reproduction against the catalogue's range and record it."""

    def record(result: Reproduction) -> None:
        verdict, state = judge(result)
        record_verdict(verdict, reproduction=state)

    return record


def synthesized(rep: pytest.TestReport) -> Verdict | None:
    """The verdict of a check or reproducer that ended without recording one. A test case in testcases/ that
    passed without one is a plain test there, not a verdict."""
    kind = report_kind(rep)
    check_id = verdict_id(rep.nodeid, kind)
    if rep.skipped:
        if hasattr(rep, "wasxfail"):  # an expected failure: reported skipped, its longrepr the failure itself
            why = rep.wasxfail.splitlines()[0] if rep.wasxfail else ""
            return Verdict(check_id=check_id, status=Status.SKIP, details=str(rep.longrepr)[-4000:],
                           summary=f"expected failure (xfail): {why}" if why else "expected failure (xfail)")
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        return Verdict(check_id=check_id, status=Status.SKIP,
                       summary=(reason.splitlines() or [""])[0].removeprefix("Skipped: "))
    if rep.failed:
        crash = getattr(rep.longrepr, "reprcrash", None)
        last = crash.message.splitlines()[0] if crash else (str(rep.longrepr).strip().splitlines() or ["?"])[-1]
        return Verdict(check_id=check_id, status=Status.UNKNOWN, summary=f"could not run ({rep.when}): {last}",
                       details=str(rep.longrepr)[-4000:])
    if rep.when == "call" and kind != "case":
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
        self.judged = False
        """A check ran, or something recorded a verdict or could not run: only then is there GO / NO-GO.
        A self-test run whose reproducers and cases only skipped ends without one."""

    def _add(self, payload: dict[str, Any], nodeid: str, kind: str) -> None:
        verdict = Verdict.from_dict(payload["verdict"])
        self.judged = self.judged or kind == "check" or verdict.status is not Status.SKIP
        self.recorded.append(report.Recorded(verdict=verdict, kind=kind, test_id=nodeid,
                                             reproduction=payload.get("reproduction"), cached=payload.get("cached")))
        self.done.add(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        kind = report_kind(report)
        if kind == "test" or report.nodeid in self.done:
            return
        payloads = [json.loads(v) for v in getattr(report, "rlcheck_verdicts", None) or []]
        for payload in payloads:
            self.judged = True
            self._add(payload, report.nodeid, kind)
        if payloads or (report.passed and report.when != "call"):
            return
        verdict = synthesized(report)
        if verdict is not None:
            self._add({"verdict": verdict.to_dict()}, report.nodeid, kind)

    @pytest.hookimpl(tryfirst=True)  # before the junitxml plugin writes its file with the testsuite properties
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        ctx = get_context(self.config)
        if ctx.hardware_unknown and self.recorded:
            self.recorded.insert(0, report.detection_unknown(ctx.hardware_unknown))
            self.judged = True
        if not self.recorded or not self.judged:
            return
        hw = ctx.profile.name if ctx.profile else "none"
        self.decision = report.decide(self.recorded, ctx.subject, hw)
        context = {"hardware": {"requested": ctx.hardware_requested, "profile": hw,
                                "evidence": ctx.hardware_evidence},
                   "recipe": ctx.recipe, "ray_address": ctx.ray_address,
                   "framework": framework_context(ctx.framework, ctx.framework_judged()),
                   "job": {"path": ctx.job_path, "format": ctx.job_format, "error": ctx.job_error} if ctx.job_path
                   else None}
        from rlcheck.plugin import cache  # lazily: the cache role loads after the report

        if (kept := cache.summary_of(self.config)) is not None:
            context["cache"] = kept.summary()
        doc = report.build_document(self.recorded, self.decision, context)
        status = report.exit_status(self.recorded)
        try:
            self.paths = tuple(str(p) for p in report.write(doc, ctx.report_dir))
        except OSError as exc:  # the report is the product: a run that could not write it fails
            why = f"could not write the report to {ctx.report_dir}: {exc.strerror or exc}"
            self.paths = (why,)
            self.decision = report.Decision(go=False, line=f"NO-GO: {why} (the checks said: {self.decision.line})")
            status = report.EXIT_UNJUDGED
        if ctx.history_dir is not None:
            self.paths += (self._keep(doc, ctx.history_dir),)
        if status != report.EXIT_GO:
            session.exitstatus = status
        suite_properties(self.config, self.decision)

    @staticmethod
    def _keep(doc: dict[str, Any], history_dir: Path) -> str:
        """The history copy's path, or why it could not be kept (said with the report's paths; the run's
        decision stands: the report itself was written)."""
        try:
            return f"history {report.keep(doc, history_dir)}"
        except OSError as exc:
            return f"history NOT kept in {history_dir}: {exc.strerror or exc}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.decision is None:
            return
        tr = terminalreporter
        tr.section("rlcheck verdicts")
        ctx = get_context(self.config)
        tr.write_line(f"hardware: {ctx.hardware_evidence}")
        tr.write_line(f"framework: {ctx.framework_judged()}")
        for line in report.summary_lines(self.recorded):
            tr.write_line(line)
        from rlcheck.plugin import cache

        if (kept := cache.summary_of(self.config)) is not None and any(r.kind == "reproducer" for r in self.recorded):
            for line in kept.lines():
                tr.write_line(line)
        tr.write_line(f"report: {', '.join(self.paths)}")
        tr.write_line(f"rlcheck {self.decision.line}", bold=True, green=self.decision.go, red=not self.decision.go)


def pytest_configure(config: pytest.Config) -> None:
    from rlcheck.plugin import cache  # lazily, so pytest loads the plugin as it did

    cache.register(config)  # controller and xdist workers alike: each looks its reproducers up
    if not hasattr(config, "workerinput"):  # xdist workers send their reports to the controller
        config.pluginmanager.register(VerdictCollector(config), "rlcheck-verdict-collector")
