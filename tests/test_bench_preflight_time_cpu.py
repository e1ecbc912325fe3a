"""The preflight_time benchmark's CPU accounting group: every process a run starts counts, Ray's daemons included
(wait4 sees only what was waited for); where no group can be made the benchmark says so (None), never 0."""

from __future__ import annotations

import sys

import pytest

from benchmarks.preflight_time import run


def test_no_group_where_the_folder_is_no_cgroup(tmp_path):
    assert run.cpu_group(tmp_path) is None  # a plain folder: no cgroup.procs in what mkdir made
    assert list(tmp_path.iterdir()) == []  # and it left nothing behind
    assert run.cpu_group(tmp_path / "absent") is None
    assert run.group_cpu_s(None) is None


def test_an_unreadable_usage_is_not_measured_and_an_empty_group_removed(tmp_path):
    group = tmp_path / "g"
    group.mkdir()
    (group / "cpuacct.usage").write_text("not a number")
    assert run.group_cpu_s(group) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run.group_cpu_s(empty) is None and not empty.exists()


def test_a_readable_usage_is_in_seconds(tmp_path):
    group = tmp_path / "g"
    group.mkdir()
    (group / "cpuacct.usage").write_text("2500000000\n")
    assert run.group_cpu_s(group) == 2.5


def can_account() -> bool:
    group = run.cpu_group()
    run.group_cpu_s(group)  # removes it
    return group is not None


@pytest.mark.skipif(not can_account(), reason="needs a writable cgroup v1 cpuacct hierarchy (root)")
def test_a_run_in_the_group_counts_its_children_that_nobody_waited_for():
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    # the grandchild is started in the background and not waited for: wait4 of the run cannot see it
    code = (f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {burn!r}]); "
            "import time; time.sleep(0.05)")
    result = run.watched([sys.executable, "-c", code], env={"PATH": "/usr/bin:/bin"}, timeout_s=60)
    exit_code, cpu_waited, cpu_all = result[0], result[5], result[6]
    assert exit_code == 0 and cpu_all is not None
    assert cpu_all > cpu_waited + 0.2  # the grandchild's burn counted in the group, not in wait4
