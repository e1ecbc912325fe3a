"""The README's first command, on this machine: the preflight ends with GO / NO-GO and report files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rlcheck.process import subproc

ROOT = Path(__file__).resolve().parents[1]


def test_main_job_checks_end_with_decision_and_report(tmp_path):
    done = subproc.run([sys.executable, "-m", "pytest", "checks/", "--hardware=auto", f"--report-dir={tmp_path}",
                        "-p", "no:cacheprovider"], timeout_s=600, cwd=str(ROOT))
    assert not done.timed_out, done.tail()
    last = [line for line in done.stdout.splitlines() if line.startswith("rlcheck GO") or
            line.startswith("rlcheck NO-GO")]
    assert len(last) == 1, done.tail(40)
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["decision"] == last[0].removeprefix("rlcheck ")
    assert doc["go"] is last[0].startswith("rlcheck GO") and (done.returncode == 0) is doc["go"]
    blocking = [v["status"] for v in doc["verdicts"] if v["blocking"]]
    if not doc["go"]:  # 2: something blocking could not be judged; 1: all judged, one or more FAIL
        assert done.returncode == (2 if "UNKNOWN" in blocking else 1), done.tail(40)
    assert {v["check_id"] for v in doc["verdicts"]} >= {"image_numpy_major"}
    assert (tmp_path / "report.md").read_text().startswith("# rlcheck report: ")
