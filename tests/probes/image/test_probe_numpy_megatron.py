"""numpy major against Megatron: recorded observations that PASS, WARN, FAIL, SKIP and stay UNKNOWN.

numpy 2 FAILs beside megatron-core < 0.16 (np.product at checkpoint save); from 0.16 on no Megatron
failure is known (reproducers/test_repro_numpy2_megatron.py), so it WARNs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck.probes.image.numpy_megatron import collect_numpy_megatron, evaluate_numpy_megatron
from rlcheck.probes.node.packages import InstalledPackages, RecordedPackages
from rlcheck.verdict import Status

RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "observations" / "numpy_megatron"
TABLE = [
    ("healthy_numpy1_megatron_0_19.json", Status.PASS, "numpy 1.26.4 with megatron-core 0.19.2"),
    ("numpy2_megatron_0_19.json", Status.WARN,
     "numpy 2.2.6 with megatron-core 0.19.2: no known Megatron failure at this release"),
    ("numpy2_megatron_0_15_pinned.json", Status.FAIL,
     "numpy 2.0.2 installed with megatron-core 0.15.3; expected numpy<2 (Megatron before 0.16 calls np.product"),
    ("numpy2_megatron_lm_git.json", Status.FAIL, "numpy 2.3.1 installed with megatron-lm 0.14.0rc0"),
    ("numpy2_megatron_lm_slime_pin.json", Status.WARN, "numpy 2.2.6 with megatron-lm 0.16.0rc0: no known"),
    ("no_megatron.json", Status.SKIP, "needs Megatron (megatron-core or megatron-lm): found none"),
    ("megatron_without_numpy.json", Status.UNKNOWN, "numpy is not installed beside megatron-core 0.19.2"),
]


@pytest.mark.parametrize(("recording", "status", "fragment"), TABLE, ids=[t[0] for t in TABLE])
def test_probe_numpy_megatron_recorded(recording, status, fragment):
    obs = collect_numpy_megatron(RecordedPackages.from_file(RECORDINGS / recording))
    verdict = evaluate_numpy_megatron(obs)
    assert verdict.status is status and fragment in verdict.summary
    assert verdict.failure_id == "numpy2-megatron"


def test_probe_numpy_megatron_reads_pinned_requirement():
    obs = collect_numpy_megatron(RecordedPackages.from_file(RECORDINGS / "numpy2_megatron_0_15_pinned.json"))
    assert obs.megatron_numpy_requirement == "numpy<2.0.0"


def test_probe_numpy_megatron_live_environment_is_read():
    obs = collect_numpy_megatron(InstalledPackages())
    assert obs.numpy_version is not None and obs.megatron_distribution == "megatron-core"
