"""Every launch script of SLIME's and Miles' `scripts/` and `examples/` at the pinned commits, as rlcheck captured it
(tests/data/upstream_corpus/, built by `python -m rlcheck.job.corpus build`), replayed through the recipe checks:
a blocking FAIL that is not expected fails the test (a false FAIL: fix the judge), and so does an expected FAIL that
disappears (each is a real defect of the upstream script, its reason recorded beside it). `open_false_fail` lists the
false FAILs rlcheck still gives (each naming the rlcheck defect): held the same way, so fixing one fails the test
until it is removed from the list, and a new one cannot hide among them.

`python tests/test_upstream_corpus.py review FILE...` records the FAILs not yet judged as 'TO REVIEW: summary'
(which the test refuses until a person replaces it with the reason it is a real defect, or fixes the judge).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from rlcheck.framework.detect import parse_declared
from rlcheck.hardware import get_profile
from rlcheck.job.job import Job
from rlcheck.preflight import by_area
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.verdict import Status

DATA = Path(__file__).parent / "data" / "upstream_corpus"
FILES = sorted(DATA.glob("*.json"))
NOT_REPLAYED = {
    "recipe_sglang_flags": "judges the flags against the SGLang installed here (a subprocess of minutes), not the "
                           "script; the committed schemas' --sglang-* options are judged by recipe_framework_args",
    "recipe_architecture_known": "judges config.json (not in the corpus) against the installed packages' lists",
}
"""Recipe checks whose collector reads this machine's installed packages, not the launch: left out of the replay."""


@cache
def corpus(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def job_of(entry: Mapping[str, Any], repo: str) -> Job:
    return Job.from_dict(dict(entry["job"]), f"{repo}:{entry['path']}")


def judge(entry: Mapping[str, Any], repo: str, framework: str | None) -> dict[str, tuple[Status, str]]:
    """check id -> (worst status, its summary) of every recipe check on the recorded job, the framework declared
    (None: judged by what the job states, as with no --framework and nothing importable)."""
    job = job_of(entry, repo)
    hw = entry.get("hardware")
    inputs = inputs_for_job(job, get_profile(hw) if hw else None)
    if framework is not None:
        inputs = dataclasses.replace(inputs, framework=parse_declared(framework))
    out = {}
    for check in by_area("recipe"):
        if check.id in NOT_REPLAYED:
            continue
        verdicts = check.run(inputs)
        worst = next((v for v in verdicts if v.status is Status.FAIL), verdicts[0])
        out[check.id] = (worst.status, worst.summary)
    return out


def _cases() -> list[Any]:
    return [pytest.param(path, i, id=f"{path.stem}:{entry['path']}")
            for path in FILES for i, entry in enumerate(corpus(path)["scripts"]) if "job" in entry]


def test_corpus_covers_every_tree():
    assert {corpus(p)["repo"] for p in FILES} == {"THUDM/slime", "radixark/miles"}
    assert {corpus(p)["framework"] for p in FILES} >= {"slime==main", "miles==main"}


@pytest.mark.parametrize(("path", "index"), _cases())
def test_corpus_script_judged_with_only_its_real_defects(path, index):
    doc = corpus(path)
    entry = doc["scripts"][index]
    expected = {**entry.get("expected_fail", {}), **entry.get("open_false_fail", {})}
    assert not [cid for cid, why in expected.items() if why.startswith("TO REVIEW")], \
        f"{entry['path']}: FAILs nobody judged yet: {expected}"
    got = {cid: summary for cid, (status, summary) in judge(entry, doc["repo"], doc["framework"]).items()
           if status is Status.FAIL}
    new = {cid: got[cid] for cid in set(got) - set(expected)}
    gone = sorted(set(expected) - set(got))  # a fixed false FAIL leaves open_false_fail with its fix
    assert not new, f"{doc['repo']}@{doc['commit'][:8]} {entry['path']}: new blocking FAIL(s): {new}"
    assert not gone, f"{doc['repo']}@{doc['commit'][:8]} {entry['path']}: expected FAIL(s) gone: {gone}"


def _entries():
    return [(corpus(p), e) for p in FILES for e in corpus(p)["scripts"]]


def test_corpus_every_script_captures_or_says_why():
    """A script that was not captured carries capture's own words; one that stopped for a variable was captured
    again with what capture named, so every entry that needed a variable shows its name and the flag to pass."""
    for _, entry in _entries():
        assert ("job" in entry) != ("error" in entry), entry["path"]
        for names in entry["needs"]:
            assert names and all(entry["job_env"].get(n) for n in names), entry["path"]
        if "error" in entry:  # capture's own words, and a person's account of why the script cannot be captured
            assert entry.get("error_why") and "TO REVIEW" not in entry["error_why"], entry["path"]
            assert "--job-env" not in entry["error"], entry["path"]  # a named variable was given and retried


def test_corpus_records_no_script_text_and_no_scratch_path():
    """Paths inside the tree are relative (the scratch checkout's place is scrubbed); the sandbox's own directory never
    shows; no script's text is kept (its shebang would)."""
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        commit = corpus(path)["commit"]
        assert "#!/bin/bash" not in text and "rlcheck-capture-" not in text, path.name
        assert not re.search(rf"/{commit[:7]}[0-9a-f]*/", text), path.name  # a tree checked out under its commit


def test_corpus_miles_scripts_are_judged_as_miles_without_being_told():
    """A bash script or Python launcher of the Miles tree is captured as Miles' job (its tree, the train.py it
    calls), so with no --framework it is judged by Miles' schema, not SLIME's."""
    miles = [(doc, e) for doc, e in _entries() if doc["repo"] == "radixark/miles" and "job" in e]
    bash = [e for _, e in miles if e["path"].endswith(".sh")]
    assert bash and all(e["job"]["framework"] == "miles" for _, e in miles)
    slime = [e for doc, e in _entries() if doc["repo"] == "THUDM/slime" and "job" in e]
    assert slime and all(e["job"]["framework"] == "slime" for e in slime)
    doc, entry = next((d, e) for d, e in miles if "--lora-rank" in e["job"]["argv"])
    status, summary = judge(entry, doc["repo"], None)["recipe_framework_args"]
    assert status is not Status.FAIL and "miles" in summary, summary
    status, summary = judge(entry, doc["repo"], "slime==main")["recipe_framework_args"]
    assert status is Status.FAIL and "--lora-rank" in summary, summary  # the other side: SLIME's parser has none


def test_corpus_names_each_script_once():
    for path in FILES:
        paths = [e["path"] for e in corpus(path)["scripts"]]
        assert paths and len(paths) == len(set(paths)), path


def review(files: list[str]) -> None:
    """Mark the FAILs of each captured entry that have no recorded reason as TO REVIEW (never overwriting one)."""
    for name in files:
        path = Path(name)
        doc = json.loads(path.read_text(encoding="utf-8"))
        for entry in doc["scripts"]:
            if "job" not in entry:
                continue
            got = {c: s for c, (st, s) in judge(entry, doc["repo"], doc["framework"]).items() if st is Status.FAIL}
            old = entry.get("expected_fail", {})
            entry["expected_fail"] = {c: old.get(c, f"TO REVIEW: {s}") for c, s in sorted(got.items())}
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:2] != ["review"]:
        sys.exit("usage: python tests/test_upstream_corpus.py review FILE.json...")
    review(sys.argv[2:])
