"""numpy beside Megatron as a rule table (rlcheck/probes/image/numpy_megatron.py): which distribution provides
Megatron and what it declares for numpy, and every verdict with its whole summary, details and remedy."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.image.numpy_megatron import (
    FAILURE_ID,
    NUMPY2_REMEDY,
    NumpyMegatronObservation,
    collect_numpy_megatron,
    evaluate_numpy_megatron,
)
from rlcheck.probes.node.packages import RecordedPackages
from rlcheck.verdict import Status


def _obs(numpy: str | None, megatron: str | None = "0.15.0", dist: str = "megatron-core",
         need: str | None = "numpy<2.0.0") -> NumpyMegatronObservation:
    return NumpyMegatronObservation(numpy_version=numpy, megatron_distribution=dist if megatron else None,
                                    megatron_version=megatron, megatron_numpy_requirement=need)


@pytest.mark.parametrize(("obs", "status", "summary", "details", "remedy"), [
    (_obs("2.0.0", None), Status.SKIP, "needs Megatron (megatron-core or megatron-lm): found none installed", "", ""),
    (_obs(None), Status.UNKNOWN, "numpy is not installed beside megatron-core 0.15.0", "", 'pip install "numpy<2"'),
    (_obs("2.0.0"), Status.FAIL, "numpy 2.0.0 installed with megatron-core 0.15.0; expected numpy<2 (Megatron before "
     "0.16 calls np.product, gone in numpy 2, when it saves a checkpoint)",
     "numpy 2.0.0; megatron-core 0.15.0 declares: numpy<2.0.0", catalog.get(FAILURE_ID).remedy),
    (_obs("2.1.3", "0.16.0", need=None), Status.WARN, "numpy 2.1.3 with megatron-core 0.16.0: no known Megatron "
     "failure at this release; SLIME's image keeps numpy 1.26",
     "numpy 2.1.3; megatron-core 0.16.0 declares: numpy (no range in its metadata)", NUMPY2_REMEDY),
    (_obs("1.26.4", dist="megatron-lm"), Status.PASS, "numpy 1.26.4 with megatron-lm 0.15.0: numpy 1.x as Megatron "
     "needs", "numpy 1.26.4; megatron-lm 0.15.0 declares: numpy<2.0.0", ""),
    (_obs("unreleased", "0.16.0"), Status.PASS, "numpy unreleased with megatron-core 0.16.0: numpy 1.x as Megatron "
     "needs", "numpy unreleased; megatron-core 0.16.0 declares: numpy<2.0.0", ""),  # no major read: not 2.x
])
def test_rules_table_numpy_megatron_verdicts(obs, status, summary, details, remedy):
    verdict = evaluate_numpy_megatron(obs)
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (status, summary, details, remedy)
    assert verdict.failure_id == FAILURE_ID


@pytest.mark.parametrize(("versions", "requires", "expected"), [
    ({"numpy": "1.26.4"}, {}, _obs("1.26.4", None, need=None)),
    ({"numpy": "2.0.0", "megatron-core": "0.13.0"},
     {"megatron-core": ['numpy<2.0.0; python_version >= "3.8"', "torch"]}, _obs("2.0.0", "0.13.0")),
    ({"numpy": "2.0.0", "megatron-lm": "0.16.0"}, {"megatron-lm": ["numpyro", "torch"]},
     _obs("2.0.0", "0.16.0", dist="megatron-lm", need=None)),  # 'numpyro' is not numpy
    ({"numpy": "2.0.0", "megatron-core": "0.16.0", "megatron-lm": "0.1"}, {"megatron-core": ["numpy"]},
     _obs("2.0.0", "0.16.0", need="numpy")),  # megatron-core first
])
def test_rules_table_numpy_megatron_collect(versions, requires, expected):
    assert collect_numpy_megatron(RecordedPackages({"versions": versions, "requires": requires})) == expected


class _LikeImportlib(RecordedPackages):
    """importlib.metadata refuses a None name (ValueError: A distribution name is required)."""

    def version(self, name: str) -> str | None:
        if not name:
            raise ValueError("A distribution name is required.")
        return super().version(name)


def test_rules_table_numpy_megatron_collect_asks_no_version_without_megatron():
    found = collect_numpy_megatron(_LikeImportlib({"versions": {"numpy": "2.0.0"}}))
    assert found == _obs("2.0.0", None, need=None)
