"""Node-health metrics for Prometheus as a text-format file for node-exporter's textfile collector
(`--collector.textfile.directory`, e.g. /var/lib/node_exporter/textfile): nothing to serve or scrape apart, and the
metrics carry node-exporter's own `instance` label. The file is written whole and renamed into place, so the
collector never reads half of it; node-exporter reads only `*.prom` files.

    rlcheck_node_status{status="fail"} 1                 one of pass / warn / fail / unknown is 1, the others 0
    rlcheck_node_check_status{check="gpu_node_health",status="FAIL"} 1   per check, its worst status 1, others 0
    rlcheck_node_last_run_timestamp_seconds 1.7648e+09  when this pass judged (alert when it stops moving)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rlcheck.verdict import Status, Verdict

CHECK_STATUSES = (Status.FAIL, Status.UNKNOWN, Status.WARN, Status.PASS, Status.SKIP)
NODE_STATUSES = ("pass", "warn", "fail", "unknown")


def _label(value: str) -> str:
    """A label value in the text format: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _worst(verdicts: Sequence[Verdict]) -> dict[str, Status]:
    worst: dict[str, Status] = {}
    for v in verdicts:
        if v.check_id not in worst or CHECK_STATUSES.index(v.status) < CHECK_STATUSES.index(worst[v.check_id]):
            worst[v.check_id] = v.status
    return worst


def prometheus_text(verdicts: Sequence[Verdict], node_status: str, judged_at_s: float) -> str:
    """The text format (version 0.0.4) of one pass; node_status as k8s_node.worst gives it."""
    if node_status not in NODE_STATUSES:
        raise ValueError(f"node_status={node_status!r}: one of {', '.join(NODE_STATUSES)}")
    out = ["# HELP rlcheck_node_status The node's rlcheck status: 1 for the current one (worst blocking verdict).",
           "# TYPE rlcheck_node_status gauge"]
    out += [f'rlcheck_node_status{{status="{s}"}} {int(s == node_status)}' for s in NODE_STATUSES]
    out += ["# HELP rlcheck_node_check_status Each check's worst status on this node: 1 for the current one.",
            "# TYPE rlcheck_node_check_status gauge"]
    for check, status in sorted(_worst(verdicts).items()):
        out += [f'rlcheck_node_check_status{{check="{_label(check)}",status="{s.value}"}} {int(s is status)}'
                for s in CHECK_STATUSES]
    out += ["# HELP rlcheck_node_last_run_timestamp_seconds When rlcheck last judged this node (Unix time).",
            "# TYPE rlcheck_node_last_run_timestamp_seconds gauge",
            f"rlcheck_node_last_run_timestamp_seconds {judged_at_s:.3f}"]
    return "\n".join(out) + "\n"


def write_textfile(path: Path, text: str) -> None:
    """Write beside the target, then rename over it (atomic on one filesystem); OSError when it cannot be written."""
    if path.suffix != ".prom":
        raise ValueError(f"{path}: node-exporter's textfile collector reads only *.prom files")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # a dot file: the collector skips it
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
