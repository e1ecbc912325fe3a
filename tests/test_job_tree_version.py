"""A captured script carries the version of the framework tree it lives in: a git checkout at a release tag is that
release, one between tags is main, a tree without git is of unknown release (said, never guessed from setup.py), and
`--job` judges by that version's schema unless --framework says otherwise."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from rlcheck.framework.detect import Installed, choose, parse_declared
from rlcheck.job import capture, sandbox
from rlcheck.job.job import Job, judged_framework
from rlcheck.job.script import with_tree_version
from rlcheck.preflight import by_area
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.verdict import Status

needs_sandbox = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
CORPUS = Path(__file__).parent / "data" / "upstream_corpus"
ARGV = ("python3", "train.py", "--rollout-batch-size", "8")
NONE = Installed(framework=None)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def _slime_tree(root: Path, tag: str | None = None, after_tag: bool = False, git: bool = True) -> Path:
    (root / "slime").mkdir(parents=True)
    (root / "slime" / "__init__.py").write_text("")
    (root / "setup.py").write_text('setup(name="slime", version="0.3.1")\n')  # main keeps the last release's here
    (root / "scripts").mkdir()
    (root / "scripts" / "run.sh").write_text("#!/bin/bash\nray job submit -- python3 train.py --rollout-batch-size 8\n")
    if git:
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "tree")
        if tag:
            _git(root, "tag", tag)
        if after_tag:
            (root / "slime" / "more.py").write_text("")
            _git(root, "add", "-A")
            _git(root, "commit", "-q", "-m", "after the tag")
    return root


def _job(framework: str = "slime") -> Job:
    return Job(argv=ARGV, intended_argv=ARGV, entrypoint="", framework=framework, source="run.sh",
               source_format="bash")


@pytest.mark.parametrize(("tree", "version", "schema", "fragment"), [
    ({"tag": "v0.3.1"}, "0.3.1", "slime-v0.3.1", "git checkout at git tag v0.3.1"),
    ({"tag": "v0.2.4"}, "0.2.4", "slime-v0.2.4", "git tag v0.2.4"),
    ({"tag": "v0.3.1", "after_tag": True}, "main", "slime-main", "git checkout at git commit"),
    ({}, "main", "slime-main", "git commit"),  # a checkout with no tag at all
    ({"git": False}, None, "slime-v0.2.4", "slime release unknown: no git checkout"),
])
def test_tree_version_is_its_tag_else_main_else_unknown(tmp_path, tree, version, schema, fragment):
    root = _slime_tree(tmp_path / "slime-tree", **tree)
    job = with_tree_version(_job(), ("slime", root))
    assert job.framework_version == version
    assert any(fragment in f for f in job.findings), job.findings
    judged = judged_framework(NONE, job)
    assert choose(judged, "slime")[0].name == schema
    if version is None:  # the setup.py version is not trusted: nothing but the default schema, and it says so
        assert judged.framework is None and "--framework slime==VERSION" in job.findings[-1]
    else:
        assert judged.release == version and "stated by the job" in judged.source


def test_tree_version_only_for_the_jobs_own_framework_and_never_over_a_stated_one(tmp_path):
    root = _slime_tree(tmp_path / "t", tag="v0.3.1")
    assert with_tree_version(_job("miles"), ("slime", root)).framework_version is None
    stated = dataclasses.replace(_job(), framework_version="0.2.4")
    assert with_tree_version(stated, ("slime", root)).framework_version == "0.2.4"
    assert with_tree_version(_job(), None).framework_version is None


def test_declared_framework_wins_over_the_tree_version(tmp_path):
    job = with_tree_version(_job(), ("slime", _slime_tree(tmp_path / "t", tag="v0.3.1")))
    assert judged_framework(parse_declared("slime==main"), job).main
    assert choose(judged_framework(parse_declared("slime==0.2.4"), job), "slime")[0].name == "slime-v0.2.4"


@needs_sandbox
def test_capture_of_a_script_in_a_tagged_tree_names_the_release(tmp_path, monkeypatch):
    root = _slime_tree(tmp_path / "slime-tree", tag="v0.3.1")
    monkeypatch.chdir(root)
    job = capture.capture(root / "scripts" / "run.sh")
    assert (job.framework, job.framework_version) == ("slime", "0.3.1")
    again = capture.capture(_slime_tree(tmp_path / "plain", git=False) / "scripts" / "run.sh")
    assert again.framework_version is None and any("release unknown" in f for f in again.findings)


def _framework_args(job: Job) -> tuple[Status, str]:
    check = next(c for c in by_area("recipe") if c.id == "recipe_framework_args")
    verdict = check.run(inputs_for_job(job, None))[0]
    return verdict.status, verdict.summary


def _corpus_job(path: str, version: str | None) -> Job:
    doc = json.loads((CORPUS / "slime-624b824.json").read_text(encoding="utf-8"))
    entry = next(e for e in doc["scripts"] if e["path"] == path)
    return Job.from_dict({**entry["job"], "framework_version": version}, path)


def test_slime_main_kimi_k2_judged_by_the_main_schema_still_fails_truncated():
    """run-kimi-k2-Instruct from a SLIME main checkout: judged by slime-main, where its 9-token argv lacks the
    required --rollout-batch-size; a whole argv from the same tree is not failed by that check."""
    status, summary = _framework_args(_corpus_job("scripts/run-kimi-k2-Instruct.sh", "main"))
    assert status is Status.FAIL and "slime main" in summary and "--rollout-batch-size is required" in summary
    status, summary = _framework_args(_corpus_job("scripts/run-glm4-9B.sh", "main"))
    assert status is not Status.FAIL and "slime main" in summary, summary
