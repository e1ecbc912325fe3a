"""Rule table for the facts kept per image (rlcheck.repro.image_facts): where they are kept (or why not), each term of
an entry's key as the exact digest it is made of, where a child process imports from, and the whole note a verdict
gives for each way a fact is found (kept, asked and kept, asked and not kept, a corrupt entry replaced)."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import sys
import types

import pytest

from rlcheck.repro import cache, image_facts

FACT = {"flags": ["--a"]}


def test_folder_is_facts_beside_the_reproducers_or_says_why_not(facts_folder, monkeypatch):
    assert image_facts.folder() == (facts_folder, "")
    image_facts.switch_off("--no-cache")
    assert image_facts.folder() == (None, "--no-cache")
    image_facts.switch_off("")
    monkeypatch.setattr(cache, "cache_dir", lambda: None)
    assert image_facts.folder() == (None, "no cache folder of this user's alone (RLCHECK_CACHE_DIR is empty, or the "
                                          "folder is shared)")


def test_files_term_is_each_files_path_and_content_or_why_it_could_not_be_read(tmp_path):
    one, gone = tmp_path / "one.py", tmp_path / "gone.py"
    one.write_bytes(b"v1")
    expected = hashlib.sha256(f"{one}".encode() + b"\0v1\0" + f"{gone}: FileNotFoundError\0".encode()).hexdigest()
    assert image_facts.files_term([one, gone]) == expected
    assert image_facts.files_term([]) == hashlib.sha256().hexdigest()
    assert image_facts.files_term([tmp_path]) == hashlib.sha256(f"{tmp_path}: IsADirectoryError\0".encode()).hexdigest()


@pytest.fixture
def no_paths(monkeypatch):
    monkeypatch.setattr(image_facts, "_paths", {})


@pytest.mark.parametrize(("pythonpath", "first"), [
    (None, []), ("", []), (f"/a{os.pathsep}{os.pathsep}/b", ["/a", "/b"]), ("/only", ["/only"]),
])
def test_child_path_where_no_child_answers_is_pythonpath_then_this_interpreters_path(monkeypatch, no_paths,
                                                                                      pythonpath, first):
    monkeypatch.setattr(image_facts, "_ask_path", lambda: None)
    if pythonpath is None:
        monkeypatch.delenv("PYTHONPATH", raising=False)
    else:
        monkeypatch.setenv("PYTHONPATH", pythonpath)
    assert image_facts.child_path() == [*first, *sys.path]


def test_child_path_is_a_fresh_interpreters_with_pythonpath_not_this_processs_run_time_path(monkeypatch, no_paths,
                                                                                            tmp_path):
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path / "added-at-run-time"))  # as Ray adds its thirdparty_files
    path = image_facts.child_path()
    assert path[0] == str(tmp_path) and str(tmp_path / "added-at-run-time") not in path and "" not in path
    assert any(p.endswith("site-packages") for p in path)


def test_child_path_is_asked_once_per_pythonpath_and_handed_as_a_copy(monkeypatch, no_paths):
    asked: list[str] = []
    monkeypatch.setattr(image_facts, "_ask_path", lambda: asked.append(os.environ.get("PYTHONPATH", "")) or ["/p"])
    monkeypatch.setenv("PYTHONPATH", "/one")
    first = image_facts.child_path()
    first.append("/changed by a caller")
    assert image_facts.child_path() == ["/p"] and asked == ["/one"]
    monkeypatch.setenv("PYTHONPATH", "/two")
    assert image_facts.child_path() == ["/p"] and asked == ["/one", "/two"]
    monkeypatch.setattr(image_facts.sys, "executable", "/other/python")  # another interpreter: asked again
    image_facts.child_path()
    assert asked == ["/one", "/two", "/two"]


def _ran(returncode=0, stdout="", raises=None):
    def run(argv, **kwargs):
        assert argv == [image_facts.sys.executable, "-c", image_facts.ASK_PATH]
        assert kwargs == {"timeout_s": 60}
        if raises is not None:
            raise raises
        return types.SimpleNamespace(returncode=returncode, stdout=stdout)
    return run


@pytest.mark.parametrize(("run", "want"), [
    (_ran(stdout='["/a", "/b"]'), ["/a", "/b"]),
    (_ran(returncode=1, stdout='["/a"]'), None),
    (_ran(stdout="not json"), None),
    (_ran(stdout='{"a": 1}'), None),
    (_ran(raises=OSError("no python")), None),
    (_ran(returncode=None, stdout='["/a"]'), None),  # killed at its deadline (subproc.run's Completed)
])
def test_asking_a_childs_path_gives_its_list_or_none(monkeypatch, run, want):
    monkeypatch.setattr(image_facts.subproc, "run", run)
    assert image_facts._ask_path() == want


def test_the_child_asked_prints_its_path_without_the_empty_entry():
    import subprocess

    done = subprocess.run([sys.executable, "-c", image_facts.ASK_PATH], capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout) == [p for p in json.loads(subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path))"], capture_output=True, text=True,
        timeout=60).stdout) if p]


def test_find_package_of_a_module_or_nothing_is_no_folder(tmp_path, monkeypatch):
    (tmp_path / "plainmoddemo.py").write_text("raise SystemExit('imported')")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert image_facts.find_package("plainmoddemo") == []
    assert image_facts.find_package("no_such_package_demo") == []


def test_terms_and_key_are_the_digests_a_child_would_see(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "packages_term", lambda path: f"packages of {path[0]}")
    monkeypatch.setenv("PYTHONPATH", "/kids")
    file = tmp_path / "f.py"
    file.write_text("x")
    terms = image_facts.terms("collector", [file])
    assert terms == {"packages": "packages of /kids", "python": cache.python_term(),
                     "source": hashlib.sha256(b"collector").hexdigest(), "files": image_facts.files_term([file])}
    assert image_facts.key_of("fact:x", terms) == hashlib.sha256(
        json.dumps({"nodeid": "fact:x", **terms}, sort_keys=True).encode()).hexdigest()


class Asked:
    def __init__(self, fact=FACT):
        self.fact, self.times = fact, 0

    def __call__(self):
        self.times += 1
        return self.fact


def test_recall_reads_a_kept_fact_saying_when_and_by_whom(facts_folder, monkeypatch):
    terms = image_facts.terms("src", [])
    key = image_facts.key_of("fact:demo", terms)
    made = datetime.datetime(2026, 12, 3, 9, 0, tzinfo=datetime.UTC)
    path = cache.Store(facts_folder, keep=image_facts.complete).save("fact:demo", key, terms, [{"fact": FACT}],
                                                                     now=made)
    assert path.parent == facts_folder
    asked = Asked()
    recalled = image_facts.recall("demo", "src", [], asked)
    made_by = json.loads(path.read_text())["body"]["made_by"]
    assert recalled == image_facts.Recalled(fact=FACT, note=f"kept for this image, made 2026-12-03T09:00:00+00:00 by "
                                                             f"{made_by} (--no-cache asks the package again)")
    assert asked.times == 0


def test_recall_keeps_what_it_asked_under_the_facts_name(facts_folder):
    asked = Asked()
    recalled = image_facts.recall("demo", "src", [], asked)
    assert recalled == image_facts.Recalled(fact=FACT, note="asked the package; kept for the next run on this image")
    key = image_facts.key_of("fact:demo", image_facts.terms("src", []))
    entry = cache.Store(facts_folder, keep=image_facts.complete).load("fact:demo", key)
    assert entry is not None and entry.payloads == ({"fact": FACT},)


def test_recall_off_asks_and_keeps_nothing(facts_folder):
    image_facts.switch_off("--no-cache")
    asked = Asked(None)
    assert image_facts.recall("demo", "src", [], asked) == image_facts.Recalled(
        fact=None, note="asked the package (facts cache off: --no-cache)")
    assert asked.times == 1 and not facts_folder.exists()


def test_recall_a_corrupt_entry_and_nothing_to_keep_says_both(facts_folder):
    key = image_facts.key_of("fact:demo", image_facts.terms("src", []))
    path = cache.Store(facts_folder).path("fact:demo", key)
    facts_folder.mkdir(parents=True)
    path.write_text("[]")
    recalled = image_facts.recall("demo", "src", [], Asked(None))
    assert recalled == image_facts.Recalled(
        fact=None, note=f"ignored a corrupt entry ({path}: not an rlcheck cache entry (TypeError: list indices must be "
                        "integers or slices, not str)); asked the package; nothing kept")


def test_recall_that_cannot_keep_says_where_and_why(facts_folder, monkeypatch):
    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache.Store, "save", refuse)
    recalled = image_facts.recall("demo", "src", [], Asked())
    assert recalled == image_facts.Recalled(
        fact=FACT, note=f"asked the package; could not keep it in {facts_folder}: [Errno 13] Permission denied")
