"""Rule table for the reproducer verdicts kept per image (rlcheck.repro.cache): each term of the key as the exact
text or digest it is made of, which imports make a reproducer's source, which entries are trusted (and the whole
reason an untrusted one is named with), and what a saved entry holds."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import types
from pathlib import Path

import pytest

import rlcheck
from rlcheck.repro import cache

TERMS = {"packages": "p", "rlcheck": "r", "source": "s", "python": "py", "hardware": "h"}
PASSED = {"verdict": {"status": "PASS"}}
NODEID = "reproducers/test_repro_x.py::test_repro_x"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def test_corrupt_entry_says_its_path_and_why():
    exc = cache.CorruptEntry(Path("/c/e.json"), "bad")
    assert (str(exc), exc.path, exc.why) == ("/c/e.json: bad", Path("/c/e.json"), "bad")


@pytest.mark.parametrize(("root", "expected"), [(Path("/c/rlcheck"), Path("/c/rlcheck/reproducers")), (None, None)])
def test_cache_dir_is_reproducers_in_rlchecks_cache_folder(monkeypatch, root, expected):
    monkeypatch.setattr(cache.scan_engines, "cache_dir", lambda: root)
    assert cache.cache_dir() == expected


def test_distributions_are_the_metadata_folders_names_in_folder_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for name in ("zlib-1.0.dist-info", "numpy-1.26.4.dist-info", "old-0.1.egg-info", "numpy", "README.txt"):
        (a / name).mkdir(parents=True)
    (b / "ray-2.55.1.dist-info").mkdir(parents=True)
    assert cache.distributions([b, tmp_path / "missing", a]) == [
        f"{b}:ray-2.55.1", f"{a}:numpy-1.26.4", f"{a}:old-0.1", f"{a}:zlib-1.0"]
    assert cache.distributions([]) == []


def test_packages_term_is_the_digest_of_every_distribution_then_the_side_directories(tmp_path, monkeypatch):
    site, sides = tmp_path / "site", tmp_path / "sides"
    (site / "torch-2.9.dist-info").mkdir(parents=True)
    (sides / "numpy-2" / "numpy-2.5.dist-info").mkdir(parents=True)
    (sides / "numpy-1" / "numpy-1.26.dist-info").mkdir(parents=True)
    (sides / "a-file").write_text("not a side directory")
    expected = sha("\n".join([f"{site}:torch-2.9", f"{sides}/numpy-1:numpy-1.26", f"{sides}/numpy-2:numpy-2.5"]))
    # an empty entry and one that is no folder are not looked at
    assert cache.packages_term(["", str(tmp_path / "nowhere"), str(site)], sides) == expected
    monkeypatch.setenv("RLCHECK_SIDECAR_DIR", str(sides))
    assert cache.packages_term([str(site)]) == expected
    assert cache.packages_term([str(site)], tmp_path / "no-sides") == sha(f"{site}:torch-2.9")
    monkeypatch.delenv("RLCHECK_SIDECAR_DIR")
    monkeypatch.setattr(cache.sidecar, "DEFAULT_DIR", sides)
    assert cache.packages_term([str(site)]) == expected
    monkeypatch.setattr(sys, "path", ["", str(site)])
    assert cache.packages_term(None, tmp_path / "no-sides") == sha(f"{site}:torch-2.9")
    # '' on the path is the working folder for an import, never read as a folder of distributions here
    monkeypatch.chdir(sides / "numpy-1")
    assert cache.packages_term(["", str(site)], tmp_path / "no-sides") == sha(f"{site}:torch-2.9")


def test_tree_hash_is_every_file_by_relative_path_and_content(tmp_path):
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "b.py").write_bytes(b"B")
    (tmp_path / "a.py").write_bytes(b"A")
    (tmp_path / "pkg" / "__pycache__" / "b.pyc").write_bytes(b"compiled")
    expected = hashlib.sha256(b"a.py\0A\0" + b"pkg/b.py\0B\0").hexdigest()
    assert cache.tree_hash(tmp_path) == expected
    assert cache.rlcheck_term("9.9", tmp_path) == f"9.9+{expected[:16]}"
    assert cache.rlcheck_term(None, tmp_path) == f"{rlcheck.__version__}+{expected[:16]}"
    assert cache.rlcheck_term("", tmp_path) == f"{rlcheck.__version__}+{expected[:16]}"


def test_python_term_names_the_implementation_version_and_machine():
    assert cache.python_term() == f"{platform.python_implementation()} {sys.version} {platform.machine()}"


@pytest.mark.parametrize(("source", "names"), [
    ("import a\nimport b.c as d, e\n", {"a", "b.c", "e"}),
    ("from x.y import z, w\n", {"x.y", "x.y.z", "x.y.w"}),
    ("import a\nfrom x import y\nfrom p import q\n", {"a", "x", "x.y", "p", "p.q"}),  # every one, in any order
    ("from . import z\nfrom .m import q\nfrom ..n import r\n", set()),
    ("def f():\n    import inner\n", {"inner"}),
    ("x = 1\n", set()),
], ids=["import", "from", "both", "relative", "nested", "none"])
def test_imported_names_every_absolute_import(source, names):
    assert cache._imported(source) == names


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A reproducer, its conftests up to the root, a first-party helper importing another, and a cycle."""
    root = tmp_path / "proj"
    (root / "reproducers" / "deep").mkdir(parents=True)
    (root / "helpers").mkdir()
    (root / "conftest.py").write_text("import helpers.one\n")
    (root / "reproducers" / "deep" / "test_repro_x.py").write_text("import helpers.two\nimport os\n")
    (root / "helpers" / "one.py").write_text("import helpers.two\n")
    (root / "helpers" / "two.py").write_text("import helpers.one\n")
    (tmp_path / "conftest.py").write_text("above the root: not the reproducer's\n")
    for name in ("one", "two"):
        module = types.ModuleType(f"helpers.{name}")
        module.__file__ = str(root / "helpers" / f"{name}.py")
        monkeypatch.setitem(sys.modules, f"helpers.{name}", module)
    return root


def test_source_term_is_the_module_its_conftests_and_first_party_imports_by_path_and_content(project):
    files = ["conftest.py", "helpers/one.py", "helpers/two.py", "reproducers/deep/test_repro_x.py"]
    expected = sha(b"".join(f.encode() + b"\0" + (project / f).read_bytes() + b"\0" for f in files))
    assert cache.source_term(project / "reproducers" / "deep" / "test_repro_x.py", project) == expected
    # given relative to the working folder, the same files
    assert cache.source_term(project / "reproducers" / "deep" / ".." / "deep" / "test_repro_x.py",
                             project / "helpers" / "..") == expected


def test_source_term_reads_a_module_that_is_not_utf_8_and_still_follows_its_imports(project):
    module = project / "reproducers" / "deep" / "test_repro_x.py"
    module.write_bytes(b"# caf\xe9 (latin-1)\nimport helpers.two\n")
    files = ["conftest.py", "helpers/one.py", "helpers/two.py", "reproducers/deep/test_repro_x.py"]
    expected = sha(b"".join(f.encode() + b"\0" + (project / f).read_bytes() + b"\0" for f in files))
    assert cache.source_term(module, project) == expected
    (project / "conftest.py").write_bytes(b"# \xff\n")  # the conftest no longer imports a helper; the module does
    assert cache.source_term(module, project) == sha(b"".join(
        f.encode() + b"\0" + (project / f).read_bytes() + b"\0" for f in files))


def test_source_term_of_a_module_missing_is_its_conftests_only(project):
    expected = sha(b"conftest.py\0" + (project / "conftest.py").read_bytes() + b"\0helpers/one.py\0import helpers.two"
                   b"\n\0helpers/two.py\0import helpers.one\n\0")
    assert cache.source_term(project / "reproducers" / "test_gone.py", project) == expected


@pytest.mark.parametrize(("where", "found"), [
    ("helpers/one.py", True),
    ("outside", False),
    ("rlcheck", False),
    ("site-packages", False),
    ("no file", False),
    ("not imported", False),
])
def test_first_party_is_a_module_under_the_root_outside_rlcheck_and_site_packages(tmp_path, monkeypatch, where,
                                                                                  found):
    module = types.ModuleType("m")
    module.__file__ = {"helpers/one.py": str(tmp_path / "helpers" / "one.py"),
                       "outside": "/elsewhere/m.py",
                       "rlcheck": str(cache.RLCHECK_DIR / "catalog.py"),
                       "site-packages": str(tmp_path / "lib" / "site-packages" / "m.py"),
                       "no file": None, "not imported": str(tmp_path / "m.py")}[where]
    if where != "not imported":
        monkeypatch.setitem(sys.modules, "m_first_party_demo", module)
    root = cache.RLCHECK_DIR.parent if where == "rlcheck" else tmp_path
    path = cache._first_party("m_first_party_demo", root)
    assert path == (Path(module.__file__).resolve() if found else None)


def test_key_of_is_the_digest_of_the_test_and_every_term():
    assert cache.key_of(NODEID, TERMS) == sha(json.dumps({"nodeid": NODEID, **TERMS}, sort_keys=True))
    with pytest.raises(ValueError) as raised:
        cache.key_of(NODEID, {"python": "x"})
    assert str(raised.value) == "terms=['python']: exactly packages, rlcheck, source, python, hardware"


@pytest.mark.parametrize(("payloads", "kept"), [
    ([], False),
    ([{"verdict": {"status": "PASS"}}], True),
    ([{"verdict": {"status": "WARN"}}, {"verdict": {"status": "FAIL"}}], True),
    ([{"verdict": {"status": "PASS"}}, {"verdict": {"status": "SKIP"}}], False),
    ([{"verdict": {"status": "UNKNOWN"}}], False),
    ([{"reproduction": {}}], False),
    ([{"verdict": {}}], False),
])
def test_cacheable_is_a_judged_run(payloads, kept):
    assert cache.cacheable(payloads) is kept


MADE = datetime.datetime(2026, 12, 3, 8, 30, 15, 999, tzinfo=datetime.UTC)


def test_store_saves_the_whole_entry_atomically_and_reads_it_back(tmp_path):
    store = cache.Store(tmp_path / "a" / "b")
    key = "k" * 40
    path = store.save(NODEID, key, TERMS, [PASSED], now=MADE)
    assert path == tmp_path / "a" / "b" / f"{sha(NODEID)[:16]}-{'k' * 32}.json" == store.path(NODEID, key)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temporary file left
    body = {"format": 1, "nodeid": NODEID, "key": key, "terms": TERMS, "made": "2026-12-03T08:30:15+00:00",
            "made_by": f"rlcheck {rlcheck.__version__} on {platform.node()}", "payloads": [PASSED]}
    assert path.read_text() == json.dumps({"body": body, "sha256": sha(json.dumps(body, sort_keys=True))}, indent=1)
    assert store.load(NODEID, key) == cache.Entry(path=path, nodeid=NODEID, made="2026-12-03T08:30:15+00:00",
                                                  made_by=body["made_by"], payloads=(PASSED,))
    again = store.save(NODEID, key, TERMS, [{"verdict": {"status": "FAIL"}}])  # the same test and key: replaced
    assert again == path and store.load(NODEID, key).payloads == ({"verdict": {"status": "FAIL"}},)
    made = datetime.datetime.fromisoformat(store.load(NODEID, key).made)
    assert made.tzinfo == datetime.UTC and made.microsecond == 0


def test_store_writes_beside_the_entry_then_renames(tmp_path, monkeypatch):
    """The entry is written to a hidden .entry-*.tmp file in the store's own folder (one filesystem: the rename is
    atomic, and a reader of *.json never meets a half-written entry), then renamed over the entry."""
    renamed: list[tuple[str, str]] = []
    rename = cache.os.replace
    monkeypatch.setattr(cache.os, "replace", lambda src, dst: (renamed.append((src, dst)), rename(src, dst))[1])
    monkeypatch.setattr(cache.tempfile, "tempdir", str(tmp_path / "elsewhere"))
    path = cache.Store(tmp_path / "store").save(NODEID, "k", TERMS, [PASSED])
    ((src, dst),) = renamed
    assert (Path(src).parent, Path(dst)) == (tmp_path / "store", path)
    assert Path(src).name.startswith(".entry-") and Path(src).name.endswith(".tmp")


def test_store_reads_an_entry_as_utf_8_whatever_the_locales_codec(tmp_path):
    """An entry is UTF-8 under any locale: one written with its text unescaped (another writer's json.dump) is read
    alike in an ASCII locale (the C locale's codec without Python's UTF-8 mode), where it would not decode as the
    locale's. The child starts in C.UTF-8 and switches its codec to ASCII (setlocale LC_CTYPE C) before reading: its
    environment decodes as written then (a mutation run names a method's mutant under test with a 'ǁ', which an
    ASCII start would garble, and the child would run the original)."""
    store, payload = cache.Store(tmp_path), {"verdict": {"status": "PASS", "summary": "caf\u00e9 \u2192 ok"}}
    path = store.save(NODEID, "k", TERMS, [payload])
    path.write_text(json.dumps(json.loads(path.read_text()), ensure_ascii=False), encoding="utf-8")
    assert store.load(NODEID, "k").payloads == (payload,)
    env = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONUTF8": "0", "RLCHECK_SEEN": "x\u01c1y"}
    code = ("import json, locale, os, sys; from pathlib import Path; from rlcheck.repro import cache; "
            "locale.setlocale(locale.LC_CTYPE, 'C'); print(locale.getpreferredencoding(False)); "
            "print(ascii(os.environ['RLCHECK_SEEN'])); "
            "print(json.dumps(cache.Store(Path(sys.argv[1])).load(sys.argv[2], 'k').payloads))")
    # run from the test's own folder: `python -c` puts its working folder first on the path
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path), NODEID], env=env, capture_output=True,
                          text=True, timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    codec, seen, payloads = done.stdout.splitlines()
    # an ASCII codec when it reads, a name beyond ASCII in its environment as given, and the entry
    assert (codec, seen, json.loads(payloads)) == ("ANSI_X3.4-1968", "'x\\u01c1y'", [payload])


def test_store_refuses_to_keep_what_is_never_kept(tmp_path):
    with pytest.raises(ValueError) as raised:
        cache.Store(tmp_path).save(NODEID, "k", TERMS, [{"verdict": {"status": "SKIP"}}])
    assert str(raised.value) == ("only PASS, WARN or FAIL verdicts (or a complete fact) are kept: never UNKNOWN, SKIP "
                                 "or none")
    assert not list(tmp_path.iterdir())
    own = cache.Store(tmp_path, keep=lambda payloads: payloads == [{"fact": {}}])
    own.save(NODEID, "k", TERMS, [{"fact": {}}])
    with pytest.raises(ValueError):
        own.save(NODEID, "k", TERMS, [PASSED])


def _rewritten(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc["body"])
    doc["sha256"] = sha(json.dumps(doc["body"], sort_keys=True))
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(("spoil", "why"), [
    (lambda p: p.write_text("{"), "not an rlcheck cache entry (JSONDecodeError: Expecting property name enclosed in "
                                  "double quotes: line 1 column 2 (char 1))"),
    (lambda p: p.write_text("[]"), "not an rlcheck cache entry (TypeError: list indices must be integers or slices, "
                                   "not str)"),
    (lambda p: p.write_text('{"body": {}}'), "not an rlcheck cache entry (KeyError: 'sha256')"),
    (lambda p: p.write_text('"text"'), "not an rlcheck cache entry (TypeError: string indices must be integers, "
                                       "not 'str')"),
    (lambda p: p.write_bytes(b"\xff"), "unreadable ('utf-8' codec can't decode byte 0xff in position 0: invalid "
                                       "start byte)"),
    (lambda p: _rewritten(p, lambda b: b.update(format=2)), f"not this test's entry (format 2, test {NODEID})"),
    (lambda p: _rewritten(p, lambda b: b.update(nodeid="other")), "not this test's entry (format 1, test other)"),
    (lambda p: _rewritten(p, lambda b: b.update(key="other")), f"not this test's entry (format 1, test {NODEID})"),
    (lambda p: _rewritten(p, lambda b: b.update(payloads=[])),
     "holds what is never kept (a verdict UNKNOWN, SKIP or none; no fact)"),
    (lambda p: _rewritten(p, lambda b: b.pop("made")), "not an rlcheck cache entry (KeyError: 'made')"),
    (lambda p: _rewritten(p, lambda b: b.pop("format")), "not an rlcheck cache entry (KeyError: 'format')"),
    (lambda p: p.write_text(p.read_text().replace('"PASS"', '"FAIL"')), "its checksum does not match its content"),
], ids=["half", "list", "no-checksum", "string", "not-utf8", "format", "nodeid", "key", "never-kept", "no-made",
        "no-format", "checksum"])
def test_store_names_an_entry_it_cannot_trust_and_why(tmp_path, spoil, why):
    store = cache.Store(tmp_path)
    path = store.save(NODEID, "k" * 40, TERMS, [PASSED], now=MADE)
    spoil(path)
    with pytest.raises(cache.CorruptEntry) as raised:
        store.load(NODEID, "k" * 40)
    assert (raised.value.path, raised.value.why) == (path, why)


def test_store_an_entry_that_is_a_folder_is_unreadable_and_none_is_a_miss(tmp_path):
    store = cache.Store(tmp_path)
    assert store.load(NODEID, "k") is None
    store.path(NODEID, "k").mkdir()
    with pytest.raises(cache.CorruptEntry) as raised:
        store.load(NODEID, "k")
    assert raised.value.why == f"unreadable ([Errno 21] Is a directory: '{store.path(NODEID, 'k')}')"
    assert cache.Store(tmp_path / "nowhere").load(NODEID, "k") is None
