"""Rule table for how the model-args-glob reproducer reads its Ray jobs (reproducers/test_repro_model_args_glob.py
run_cases): one job per kind runs both cases in turn, separated by a line of its own; each case's argv is read from its
own part of the job's log. A case that never ran is None, never its neighbour's argv; Ray's own "Running entrypoint"
line, which holds the separator inside a longer line, splits nothing. No Ray here: launch's submit and wait stand in."""

from __future__ import annotations

import json
import types

import pytest

from tests import reproducer_file


@pytest.fixture(scope="module")
def glob_module() -> types.ModuleType:
    return reproducer_file.load('test_repro_model_args_glob.py', 'rlcheck_repro_model_args_glob')


def printed(argv: list[str]) -> str:
    return "RLCHECK_ARGV " + json.dumps(argv)


@pytest.fixture
def jobs(glob_module, monkeypatch):
    """launch as run_cases uses it: what was submitted, and the log the job gives back (set by the test)."""
    state: dict = {"submitted": [], "logs": ""}

    def submit_entrypoint(url, entrypoint):
        state["submitted"].append((url, entrypoint))
        return "job-1"

    def wait_job(url, job, timeout_s):
        state["waited"] = (url, job, timeout_s)
        return types.SimpleNamespace(status="SUCCEEDED", logs=state["logs"])

    monkeypatch.setattr(glob_module.launch, "submit_entrypoint", submit_entrypoint)
    monkeypatch.setattr(glob_module.launch, "wait_job", wait_job)
    return state


RUNNING = "Running entrypoint for job raysubmit_x: python a.py; echo RLCHECK_NEXT_CASE; python b.py"


@pytest.mark.parametrize(("logs", "want"), [
    # both ran: each part its own argv (Ray's echo of the entrypoint, separator inside, splits nothing)
    ([RUNNING, printed(["--a", "1"]), "RLCHECK_NEXT_CASE", printed(["--b", "2"])], [["--a", "1"], ["--b", "2"]]),
    # the first never ran: None, and the second's argv stays the second's
    ([RUNNING, "bash: Bad substitution", "RLCHECK_NEXT_CASE", printed(["--b", "2"])], [None, ["--b", "2"]]),
    # the second never ran
    ([printed(["--a", "1"]), " RLCHECK_NEXT_CASE ", "Traceback"], [["--a", "1"], None]),
    # the job died before the separator: the second is None, not the first's argv
    ([printed(["--a", "1"])], [["--a", "1"], None]),
    ([], [None, None]),
    # a job that printed the separator more often than it has cases: the extra parts are not read
    ([printed(["--a"]), "RLCHECK_NEXT_CASE", printed(["--b"]), "RLCHECK_NEXT_CASE", printed(["--c"])],
     [["--a"], ["--b"]]),
])
def test_each_case_is_read_from_its_own_part_of_the_jobs_log(glob_module, jobs, logs, want):
    jobs["logs"] = "\n".join(logs)
    assert glob_module.run_cases("http://127.0.0.1:8265", ["python a.py", "python b.py"]) == want
    assert jobs["submitted"] == [("http://127.0.0.1:8265", "python a.py; echo RLCHECK_NEXT_CASE; python b.py")]
    assert jobs["waited"] == ("http://127.0.0.1:8265", "job-1", 120)


def test_one_case_is_one_entrypoint_with_no_separator(glob_module, jobs):
    jobs["logs"] = printed(["--a"])
    assert glob_module.run_cases("http://u", ["python a.py"]) == [["--a"]]
    assert jobs["submitted"] == [("http://u", "python a.py")]


def test_three_jobs_one_per_kind_each_running_both_cases(glob_module, monkeypatch, tmp_path):
    asked: list = []
    monkeypatch.setattr(glob_module, "run_cases", lambda url, entrypoints: asked.append(entrypoints) or [None, None])
    monkeypatch.setattr(glob_module, "megatron_reads", lambda argv: "not parsed")
    result = glob_module.reproduce("http://u", tmp_path)
    assert len(asked) == 3 and all(len(e) == 2 for e in asked)
    unquoted, quoted, ours = asked
    assert all('${MODEL_ARGS[@]}' in e and '"${MODEL_ARGS[@]}"' not in e for e in unquoted)
    assert all('"${MODEL_ARGS[@]}"' in e for e in quoted)
    assert all("--moe-layer-freq" in e and "MODEL_ARGS" not in e for e in ours)
    assert [sorted(p.name for p in (tmp_path / case).iterdir() if p.name not in ("model.sh", "print_argv.py"))
            for case in ("qwen3-30b-a3b", "glm5.2")] == [["1"], ["03+175"]]  # each case's decoy in its folder
    assert result.reproduced is False and result.fix_verified is False  # nothing printed: neither
