"""Rule table for the upstream launch corpus builder (rlcheck.job.corpus): which files of a tree are launches, the
scratch tree's place scrubbed from capture's words, the rounds of variables a capture is retried with, and what a
rebuilt document keeps of a person's judgements. Capture itself is rlcheck.job.capture's (its own tests): a recorded
capture stands in for it."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from rlcheck.job import capture, corpus
from rlcheck.job.job import Job
from tests.flushed_stream import FlushedStream


def _files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            (root / rel).write_bytes(text)
        else:
            (root / rel).write_text(text)


def test_launch_files_are_the_scripts_and_the_python_launchers(tmp_path):
    _files(tmp_path, {"scripts/run-qwen.sh": "", "scripts/models/qwen.sh": "", "scripts/b/run.py": "execute_train(",
                      "scripts/util.py": "print(1)", "scripts/a_util.py": "print(1)",
                      "examples/b/launch.py": b"\xff execute_train(", "examples/a/run.sh": "",
                      "examples/a/README.md": "",
                      "examples/a/launch.py": "from x import execute_train", "tools/run.sh": "", "run.sh": "",
                      "scripts/models.sh": "", "examples/x.bash": ""})
    (tmp_path / "examples" / "dir.sh").mkdir()
    assert corpus.launch_files(tmp_path) == ["scripts/b/run.py", "scripts/models.sh", "scripts/run-qwen.sh",
                                             "examples/a/launch.py", "examples/a/run.sh", "examples/b/launch.py"]


def test_launch_files_of_a_tree_without_scripts(tmp_path):
    assert corpus.launch_files(tmp_path) == []


def test_the_scratch_trees_place_is_scrubbed(tmp_path):
    root = tmp_path / "tree"
    text = f"{root.resolve()}/scripts/run.sh: failed in {root.resolve()} ({root.resolve()}x)"
    assert corpus._scrub(text, root) == "scripts/run.sh: failed in . (.x)"


# --- capture_one: retried with the variables capture names ------------------------------------------------------------

JOB = Job(argv=("python3", "train.py"), intended_argv=("python3", "train.py"), entrypoint="", source="x",
          source_format="bash", working_dir="WORK")


@pytest.fixture
def captures(monkeypatch, tmp_path):
    """capture.capture answering from a list (a Job, or an exception to raise), recording each call."""
    asked: list[tuple] = []
    answers: list = []

    def fake(path, env=(), args=(), show=()):
        asked.append((path, env, tuple(args), os.getcwd(), *([tuple(show)] if show else [])))
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer
    monkeypatch.setattr(capture, "capture", fake)
    return asked, answers


def _needs(*names: str) -> capture.CaptureFailed:
    return capture.CaptureFailed("stops for want of X: pass " + " ".join(f"--job-env {n}=..." for n in names))


def test_capture_one_retries_with_each_variable_it_lacks(captures, tmp_path):
    asked, answers = captures
    root = tmp_path / "tree"
    root.mkdir()
    job = JOB.__class__(**{**{f: getattr(JOB, f) for f in JOB.__slots__}, "working_dir": f"{root.resolve()}/sub"})
    answers += [_needs("MASTER_ADDR", "OTHER"), _needs("MODEL_DIR", "MASTER_ADDR"), job]
    here = os.getcwd()
    got = corpus.capture_one(root, "scripts/run.sh", {"A": "1"}, ["qwen"])
    assert os.getcwd() == here
    assert got == {"needs": [["MASTER_ADDR", "OTHER"], ["MODEL_DIR"]],
                   "job_env": {"A": "1", "MASTER_ADDR": "10.0.0.1", "OTHER": "/root/OTHER",
                               "MODEL_DIR": "/root/models"},
                   "job": {k: v for k, v in JOB.to_dict().items() if k != "source"} | {"working_dir": "sub"}}
    assert [a[1] for a in asked] == [(("A", "1"),), (("A", "1"), ("MASTER_ADDR", "10.0.0.1"), ("OTHER", "/root/OTHER")),
                                     (("A", "1"), ("MASTER_ADDR", "10.0.0.1"), ("OTHER", "/root/OTHER"),
                                      ("MODEL_DIR", "/root/models"))]
    assert {(a[0], a[2], a[3]) for a in asked} == {(Path("scripts/run.sh"), ("qwen",), str(root))}


def test_capture_one_shows_the_folders_chosen(captures, tmp_path):
    asked, answers = captures
    answers += [JOB]
    corpus.capture_one(tmp_path, "run.py", show=["/root/models/M"])
    assert asked == [(Path("run.py"), (), (), str(tmp_path), ("/root/models/M",))]


def test_capture_one_stops_on_an_error_naming_no_new_variable(captures, tmp_path):
    _, answers = captures
    answers += [capture.JobFormatError(f"{tmp_path.resolve()}/scripts/run.sh: pass --job-env A=...")]
    assert corpus.capture_one(tmp_path, "scripts/run.sh", {"A": "1"}) == {
        "needs": [], "job_env": {"A": "1"}, "error": "scripts/run.sh: pass --job-env A=..."}


def test_capture_one_gives_up_after_its_rounds(captures, tmp_path):
    asked, answers = captures
    answers += [_needs(f"V{i}") for i in range(corpus._MAX_ROUNDS + 1)]
    got = corpus.capture_one(tmp_path, "run.sh")
    assert got == {"needs": [["V0"], ["V1"], ["V2"], ["V3"]],
                   "job_env": {f"V{i}": f"/root/V{i}" for i in range(4)},
                   "error": "still stops for a variable after 4 rounds"}
    assert len(asked) == 4


def test_capture_one_returns_to_where_it_was_when_capture_raises(captures, tmp_path):
    _, answers = captures
    answers += [RuntimeError("boom")]
    here = os.getcwd()
    with pytest.raises(RuntimeError):
        corpus.capture_one(tmp_path, "run.sh")
    assert os.getcwd() == here


# --- build and main: what a rebuilt document keeps ------------------------------------------------------------------

SHOWN = [{"path": "/root/models/M", "stands_for": "its config.json"}, {"path": "/d", "stands_for": "data"}]


def test_build_keeps_a_persons_judgements(monkeypatch, tmp_path):
    _files(tmp_path, {"scripts/a.sh": "", "scripts/b.sh": "", "scripts/c.sh": "", "scripts/d.sh": ""})
    answers = {"scripts/a.sh": {"needs": [], "job_env": {}, "job": {"argv": ["python3"]}},
               "scripts/b.sh": {"needs": [], "job_env": {}, "error": "failed"},
               "scripts/c.sh": {"needs": [["X"]], "job_env": {"X": "/root/X"}, "job": {"argv": ["python3"]}}}
    asked = []
    monkeypatch.setattr(corpus, "capture_one", lambda root, rel, env, args, show: (
        asked.append((root, rel, env, args, *([show] if show else []))), answers[rel])[1])
    stream = FlushedStream()
    monkeypatch.setattr(sys, "stderr", stream)
    old = {"scripts": [
        {"path": "scripts/a.sh", "hardware": "gb300", "expected_fail": {"x": "why"}, "error_why": "old",
         "job_env_given": {"B": "2"}, "script_args": ["m"], "job_show": SHOWN},
        {"path": "scripts/b.sh", "expected_fail": {"x": "why"}, "error_why": "needs a GPU"},
        {"path": "scripts/d.sh", "hardware": "h200", "job": {"argv": ["old"]}},
        {"path": "scripts/gone.sh", "hardware": "h200"}]}
    doc = corpus.build(tmp_path, "THUDM/slime", "abc", "slime==main", old, only=["scripts/a.sh", "scripts/b.sh",
                                                                                  "scripts/c.sh"])
    assert asked == [(tmp_path, "scripts/a.sh", {"B": "2"}, ["m"], ["/root/models/M", "/d"]),
                     (tmp_path, "scripts/b.sh", None, ()),
                     (tmp_path, "scripts/c.sh", None, ())]
    # each capture named as it starts (a build takes minutes)
    assert (stream.flushed, stream.pending) == (
        "capture scripts/a.sh\ncapture scripts/b.sh\ncapture scripts/c.sh\n", "")
    assert doc == {"repo": "THUDM/slime", "commit": "abc", "framework": "slime==main", "scripts": [
        {"path": "scripts/a.sh", "hardware": "gb300", "needs": [], "job_env": {}, "job": {"argv": ["python3"]},
         "job_env_given": {"B": "2"}, "script_args": ["m"], "job_show": SHOWN, "expected_fail": {"x": "why"}},
        {"path": "scripts/b.sh", "hardware": "h200", "needs": [], "job_env": {}, "error": "failed",
         "error_why": "needs a GPU"},
        {"path": "scripts/c.sh", "hardware": "h200", "needs": [["X"]], "job_env": {"X": "/root/X"},
         "job": {"argv": ["python3"]}},
        {"path": "scripts/d.sh", "hardware": "h200", "job": {"argv": ["old"]}}]}  # not re-captured: kept as it was
    assert list(doc["scripts"][0]) == ["path", "hardware", "needs", "job_env", "job", "job_env_given", "script_args",
                                       "job_show", "expected_fail"]


def test_build_without_an_old_document_or_a_selection(monkeypatch, tmp_path):
    _files(tmp_path, {"scripts/a.sh": "", "scripts/b.sh": ""})
    monkeypatch.setattr(corpus, "capture_one", lambda root, rel, env, args, show: {"needs": [], "job_env": {},
                                                                                   "error": rel})
    doc = corpus.build(tmp_path, "r", "c", "f")
    assert doc["scripts"] == [{"path": p, "hardware": "h200", "needs": [], "job_env": {}, "error": p}
                              for p in ("scripts/a.sh", "scripts/b.sh")]
    assert corpus.build(tmp_path, "r", "c", "f", only=["scripts/a.sh"])["scripts"] == doc["scripts"][:1]
    assert corpus.build(tmp_path, "r", "c", "f", only=["scripts/b.sh"])["scripts"] == doc["scripts"][1:]


def test_main_builds_the_document_over_the_old_one(monkeypatch, tmp_path):
    seen = []

    def build(root, repo, commit, framework, old, only):
        seen.append((root, repo, commit, framework, old, only))
        return {"scripts": [{"path": "é"}], "commit": "c"}
    monkeypatch.setattr(corpus, "build", build)
    out = tmp_path / "c.json"
    argv = ["build", str(tmp_path), "--repo", "r", "--commit", "c", "--framework", "slime==main", "-o", str(out)]
    assert corpus.main(argv) == 0
    assert out.read_text(encoding="utf-8") == json.dumps({"scripts": [{"path": "é"}], "commit": "c"}, indent=1) + "\n"
    assert corpus.main([*argv, "--only", "a", "--only", "b"]) == 0
    assert seen == [(tmp_path.resolve(), "r", "c", "slime==main", None, []),
                    (tmp_path.resolve(), "r", "c", "slime==main", {"scripts": [{"path": "é"}], "commit": "c"},
                     ["a", "b"])]


@pytest.mark.parametrize("drop", ["--repo", "--commit", "--framework", "-o"])
def test_main_requires_each_option(monkeypatch, tmp_path, drop):
    argv = {"--repo": "r", "--commit": "c", "--framework": "f", "-o": str(tmp_path / "o.json")}
    with pytest.raises(SystemExit) as exc:
        corpus.main(["build", str(tmp_path), *[t for k, v in argv.items() if k != drop for t in (k, v)]])
    assert exc.value.code == 2


def test_main_says_what_it_takes(capsys):
    with pytest.raises(SystemExit) as exc:
        corpus.main(["--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for text in ("usage: python -m rlcheck.job.corpus [-h] --repo REPO --commit COMMIT --framework FRAMEWORK -o "
                 "OUTPUT [--only ONLY] {build} root", "the upstream tree, checked out at the commit",
                 "the framework the tree is judged as: slime==main ...", "re-capture only this path (repeatable)"):
        assert re.search(rf"(?:^| ){re.escape(text)}(?: |$)", out), text


def test_main_does_only_build(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        corpus.main(["scan", str(tmp_path), "--repo", "r", "--commit", "c", "--framework", "f", "-o",
                     str(tmp_path / "o.json")])
    assert exc.value.code == 2
    assert "argument what: invalid choice: 'scan' (choose from 'build')" in capsys.readouterr().err
