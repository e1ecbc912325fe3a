"""The catalogue loader's rules as tables (issue 21): each field's allowed values on both sides, each engine's
example / near-miss check, each loader refusal word for word, version ranges, traits read from an argv."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from rlcheck import catalog, scan_engines
from rlcheck.catalog import Affected, CatalogError, KnownFailure

GOOD = dict(id="boom", layer="image", severity="crash", title="Boom", signatures=("boom",),
            examples=("boom happened",), near_misses=("bang",), cause="c", remedy="r")


def _make(**override: object) -> KnownFailure:
    return KnownFailure(**{**GOOD, **override})  # type: ignore[arg-type]


VALID = [
    # field overrides an entry accepts
    {}, {"id": "a1"}, {"id": "a.b-c"}, {"id": "0x"}, {"id": "torch-2.11"},
    *({"layer": layer} for layer in catalog.LAYERS), *({"severity": s} for s in catalog.SEVERITIES),
    *({"reproducer": f"{d}/test_x.py::test_x"} for d in ("checks", "reproducers", "kernels", "testcases", "tests")),
    {"reproducer": "reproducers/sub/test_x.py::test_repro_x_y"}, {"reproducer": ""},
    {"only_when": "dsa"}, {"only_when": ""}, {"title": " t "},
    {"signatures": ("a", "b"), "examples": ("a", "b"), "near_misses": ("c", "d")},
]


@pytest.mark.parametrize("override", VALID)
def test_catalog_rule_entry_accepted(override: dict) -> None:
    entry = _make(**override)
    assert {k: getattr(entry, k) for k in override} == override


INVALID = [
    # field overrides, the whole ValueError message
    ({"id": "a"}, "id='a': lowercase letters, digits, '.' and '-'"),  # two characters at least
    ({"id": "Boom"}, "id='Boom': lowercase letters, digits, '.' and '-'"),
    ({"id": "-boom"}, "id='-boom': lowercase letters, digits, '.' and '-'"),
    ({"id": "boom-"}, "id='boom-': lowercase letters, digits, '.' and '-'"),
    ({"id": "bo om"}, "id='bo om': lowercase letters, digits, '.' and '-'"),
    ({"id": "boom\n"}, "id='boom\\n': lowercase letters, digits, '.' and '-'"),
    ({"id": "bo_om"}, "id='bo_om': lowercase letters, digits, '.' and '-'"),
    ({"layer": "gpu"}, f"layer='gpu': one of {', '.join(catalog.LAYERS)}"),
    ({"layer": "Image"}, f"layer='Image': one of {', '.join(catalog.LAYERS)}"),
    ({"severity": "fatal"}, f"severity='fatal': one of {', '.join(catalog.SEVERITIES)}"),
    ({"title": ""}, "title='': required"), ({"title": "  "}, "title='': required"),
    ({"cause": ""}, "cause='': required"), ({"remedy": " \n"}, "remedy='': required"),
    ({"signatures": ()}, "signatures, examples and near_misses: each needs at least one line"),
    ({"examples": ()}, "signatures, examples and near_misses: each needs at least one line"),
    ({"near_misses": ()}, "signatures, examples and near_misses: each needs at least one line"),
    ({"reproducer": "not a test id"}, "reproducer='not a test id': a test id such as "
     "'reproducers/test_repro_x.py::test_repro_x' (the preflight check that guards an entry is the check "
     "registry's to say)"),
    ({"reproducer": "src/test_x.py::test_x"}, "reproducer='src/test_x.py::test_x': a test id such as "
     "'reproducers/test_repro_x.py::test_repro_x' (the preflight check that guards an entry is the check "
     "registry's to say)"),
    ({"reproducer": "tests/test_x.py::check_x"}, "reproducer='tests/test_x.py::check_x': a test id such as "
     "'reproducers/test_repro_x.py::test_repro_x' (the preflight check that guards an entry is the check "
     "registry's to say)"),
    ({"reproducer": "tests/test_x.py::test_x extra"}, "reproducer='tests/test_x.py::test_x extra': a test id "
     "such as 'reproducers/test_repro_x.py::test_repro_x' (the preflight check that guards an entry is the check "
     "registry's to say)"),
    ({"only_when": "moe"}, f"only_when='moe': one of {', '.join(catalog.TRAITS)} (or leave it out)"),
    ({"signatures": ("(unclosed",)}, "signature '(unclosed' does not compile: missing ), unterminated subpattern "
     "at position 0"),
    ({"examples": ("something else",)}, "example 'something else' matches none of the signatures (engine "
     f"{scan_engines.ENGINES[0]})"),
    ({"near_misses": ("boom again",)},
     f"near miss 'boom again' matches a signature (engine {scan_engines.ENGINES[0]})"),
    ({"examples": ("boom happened", "nothing")}, "example 'nothing' matches none of the signatures (engine "
     f"{scan_engines.ENGINES[0]})"),
    ({"near_misses": ("bang", "boom")}, f"near miss 'boom' matches a signature (engine {scan_engines.ENGINES[0]})"),
]


@pytest.mark.parametrize(("override", "message"), INVALID, ids=[m[:40] for _, m in INVALID])
def test_catalog_rule_entry_refused_with_the_whole_reason(override: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        _make(**override)
    assert str(caught.value) == message


@pytest.mark.skipif(len(scan_engines.ENGINES) < 2, reason="needs a second engine (hyperscan or google-re2)")
def test_catalog_rule_each_engine_checks_examples_and_near_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    # A signature the stdlib reads one way and a fast engine another must be refused by the engine that misses
    # the example: here every engine but the last answers "no match", so only the last engine's name is said.
    for engine in scan_engines.ENGINES:
        real = scan_engines.make_finder

        def finder(name: str, patterns: list[str], _engine: str = engine, _real=real):  # type: ignore[no-untyped-def]
            inner = _real(name, patterns)
            if name != _engine:
                return inner
            return type("Blind", (), {"ids_in": staticmethod(lambda piece: set()),
                                      "anchors": staticmethod(inner.anchors)})()

        monkeypatch.setattr(scan_engines, "make_finder", finder)
        with pytest.raises(ValueError) as caught:
            _make()
        assert str(caught.value) == f"example 'boom happened' matches none of the signatures (engine {engine})"
        monkeypatch.setattr(scan_engines, "make_finder", real)


@pytest.mark.parametrize("engine", scan_engines.ENGINES)
def test_catalog_rule_signature_one_engine_refuses_is_named(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(signature: str, name: str) -> str:
        return "error: not in this dialect" if name == engine else ""

    monkeypatch.setattr(scan_engines, "compile_error", refuse)
    with pytest.raises(ValueError) as caught:
        _make()
    assert str(caught.value) == f"signature 'boom' does not compile with {engine}: error: not in this dialect"


RANGES = [
    # specifier, version, inside
    (">=2.0,<3", "2.0", True), (">=2.0,<3", "1.9", False), (">=2.0,<3", "3", False), (">=2.0,<3", "2.99", True),
    (">=0.9.dev0,<0.1.11", "0.1.10", False), ("<0.1.11", "0.1.10rc1", True),  # pre-releases count
    ("<0.1.11", "0.1.11rc1", False),  # PEP 440: "<V" leaves out V's own pre-releases
    (">=1", "not-a-version", False), ("", "1.0", True), ("==2.5.*", "2.5.3", True),
]


@pytest.mark.parametrize(("specifier", "version", "inside"), RANGES)
def test_catalog_rule_affected_range(specifier: str, version: str, inside: bool) -> None:
    assert Affected(package="p", specifier=specifier).contains(version) is inside


def test_catalog_rule_affected_specifier_refused() -> None:
    with pytest.raises(ValueError) as caught:
        Affected(package="ray", specifier="two point oh")
    assert str(caught.value) == "specifier='two point oh': a PEP 440 range such as '>=2.0,<3'"


A = Affected(package="a", specifier=">=2")
B = Affected(package="b", specifier="<1")
LIVE = [
    # affected, installed versions, live_in
    ((), {"a": "2"}, None), ((A,), {}, None), ((A,), {"a": None}, None), ((A,), {"a": "2"}, True),
    ((A,), {"a": "1"}, False), ((A, B), {"a": "2", "b": "0.5"}, True), ((A, B), {"a": "2", "b": "1"}, False),
    ((A, B), {"a": "1", "b": "0.5"}, False), ((A, B), {"a": "1"}, False), ((A, B), {"b": "0.5"}, None),
    ((A, B), {"a": "2"}, None),
]


@pytest.mark.parametrize(("affected", "versions", "live"), LIVE)
def test_catalog_rule_live_in(affected: tuple, versions: dict, live: bool | None) -> None:
    assert _make(affected=affected).live_in(versions) is live


def _toml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


ENTRY = ("id = 'boom'\nlayer = 'image'\nseverity = 'crash'\ntitle = 'Boom'\nsignatures = ['boom']\n"
         "examples = ['boom happened']\nnear_misses = ['bang']\ncause = 'c'\nremedy = 'r'\n")
LOAD_REFUSED = [
    # file text, the whole CatalogError message (the file's name, then what is wrong)
    ("[[failure]]\n" + ENTRY.replace("title = 'Boom'", "title = 5"),
     "f.toml: entry 'boom': title=5: must be a string"),
    ("[[failure]]\n" + ENTRY.replace("id = 'boom'\n", ""), "f.toml: entry '<no id>': missing field(s) ['id']"),
    ("[[failure]]\n" + ENTRY + "affected = [{ package = 'ray' }]\n",
     "f.toml: entry 'boom': missing field(s) ['specifier']"),
    ("[[failure]]\n" + ENTRY + "affected = [{ package = 'ray', specifier = '>=1', extra = 1 }]\n",
     "f.toml: entry 'boom': unknown field(s) ['extra']: allowed are package, specifier"),
    ("[[failure]]\n" + ENTRY + "affected = [{ package = 'ray', specifier = 'x y' }]\n",
     "f.toml: entry 'boom': specifier='x y': a PEP 440 range such as '>=2.0,<3'"),
    ("[[failure]]\n" + ENTRY.replace("layer = 'image'", "layer = 'gpu'"),
     f"f.toml: entry 'boom': layer='gpu': one of {', '.join(catalog.LAYERS)}"),
    ("failure = [1]\n", "f.toml: [[failure]] entry 1 is not a table"),
    ("[failure]\n" + ENTRY, "f.toml: 'failure' is a single table ([failure]); entries are an array of tables: "
     "write [[failure]]"),
    ("title = 'x'\n[[failure]]\n" + ENTRY, "f.toml: unknown top-level keys ['title']: only [[failure]] tables"),
    ("a = 1\nb = 2\n", "f.toml: unknown top-level keys ['a', 'b']: only [[failure]] tables"),
]


@pytest.mark.parametrize(("text", "message"), LOAD_REFUSED, ids=[m[:40] for _, m in LOAD_REFUSED])
def test_catalog_rule_file_refused_with_the_whole_reason(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CatalogError) as caught:
        catalog.load_file(_toml(tmp_path / "f.toml", text))
    assert str(caught.value) == message


def test_catalog_rule_file_unreadable_named(tmp_path: Path) -> None:
    path = _toml(tmp_path / "f.toml", "[[failure]\n")
    with pytest.raises(CatalogError) as caught:
        catalog.load_file(path)
    assert str(caught.value).startswith(f"{path}: cannot read catalogue file: ")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(CatalogError, match="bin.toml: cannot read catalogue file: 'utf-8' codec"):
        catalog.load_file(tmp_path / "bin.toml")
    with pytest.raises(CatalogError, match="absent.toml: cannot read catalogue file: "):
        catalog.load_file(tmp_path / "absent.toml")


def test_catalog_rule_file_read_whole(tmp_path: Path) -> None:
    assert catalog.load_file(_toml(tmp_path / "empty.toml", "")) == []
    text = ("[[failure]]\n" + ENTRY + "upstream = ['https://x/1']\nreproducer = 'tests/test_x.py::test_x'\n"
            "affected = [{ package = 'ray', specifier = '>=1' }]\nonly_when = 'dsa'\n"
            "[[failure]]\n" + ENTRY.replace("id = 'boom'", "id = 'boom2'"))
    first, second = catalog.load_file(_toml(tmp_path / "two.toml", text))
    assert first == KnownFailure(**GOOD, upstream=("https://x/1",), reproducer="tests/test_x.py::test_x",  # type: ignore[arg-type]
                                 affected=(Affected(package="ray", specifier=">=1"),), source="two.toml",
                                 only_when="dsa")
    assert (second.id, second.source, second.upstream, second.affected, second.reproducer) == (
        "boom2", "two.toml", (), (), "")
    assert isinstance(first.signatures, tuple) and isinstance(first.examples, tuple)
    assert isinstance(first.near_misses, tuple)


def test_catalog_rule_directory_loaded_in_name_order_duplicates_refused(tmp_path: Path) -> None:
    _toml(tmp_path / "b.toml", "[[failure]]\n" + ENTRY.replace("id = 'boom'", "id = 'bravo'"))
    _toml(tmp_path / "a.toml", "[[failure]]\n" + ENTRY.replace("id = 'boom'", "id = 'alpha'"))
    _toml(tmp_path / "notes.txt", "not a catalogue file")
    assert list(catalog.load_catalog(tmp_path)) == ["alpha", "bravo"]
    dup = tmp_path / "dup"
    dup.mkdir()
    _toml(dup / "a.toml", "[[failure]]\n" + ENTRY)
    _toml(dup / "c.toml", "[[failure]]\n" + ENTRY)
    with pytest.raises(CatalogError) as caught:
        catalog.load_catalog(dup)
    assert str(caught.value) == "c.toml: entry 'boom': duplicate id (first in a.toml)"


def test_catalog_rule_default_directory_and_get() -> None:
    assert catalog.load_catalog() is catalog.load_catalog(catalog.DATA_DIR)
    assert catalog.get("uvicorn-log-level").id == "uvicorn-log-level"
    with pytest.raises(KeyError) as caught:
        catalog.get("no-such-failure")
    assert caught.value.args[0] == ("unknown failure id 'no-such-failure': valid are "
                                    f"{', '.join(sorted(catalog.load_catalog()))}")


TRAITS = [
    # argv, traits
    ([], frozenset()),
    (["--sglang-nsa-prefill-backend", "x"], {"dsa"}),
    (["--sglang-nsa-decode"], {"dsa"}),
    (["--sglang-attention-backend", "nsa"], {"dsa"}),
    (["--sglang-attention-backend", "fa3"], frozenset()),
    (["--sglang-attention-backend"], frozenset()),  # the last token: no value
    (["nsa", "--sglang-attention-backend"], frozenset()),  # the value comes after the flag, not before
    (["x", "--sglang-attention-backend", "nsa"], {"dsa"}), (["glm5", "--spec", "qwen3"], frozenset()),
    (["--sglang-attention-backend=nsa"], frozenset()),  # SLIME passes flag and value as two tokens
    (["--spec", "glm5"], {"dsa"}), (["--spec", "x.glm5.y"], {"dsa"}), (["--spec", "deepseek_v32"], {"dsa"}),
    (["--spec", "dsv32-lite"], {"dsa"}), (["--spec", "qwen3"], frozenset()), (["--spec"], frozenset()),
    (["glm5", "--spec"], frozenset()), (["--model", "glm5"], frozenset()),
    (["--nsa", "--sglang-nsa"], frozenset()), (["--x", "--sglang-nsa-topk"], {"dsa"}),
    (("--spec", "glm5"), {"dsa"}),
]


@pytest.mark.parametrize(("argv", "traits"), TRAITS)
def test_catalog_rule_job_traits(argv: list[str], traits: frozenset[str]) -> None:
    assert catalog.job_traits(argv) == traits


def test_catalog_rule_installed_versions() -> None:
    found = catalog.installed_versions(["pytest", "rlcheck-no-such-distribution"])
    assert found == {"pytest": pytest.__version__, "rlcheck-no-such-distribution": None}
    assert catalog.installed_versions(()) == {}


def test_catalog_rule_patterns_compile_each_signature() -> None:
    entry = _make(signatures=("boom", "b.om"), examples=("boom",), near_misses=("bang",))
    assert [p.pattern for p in entry.patterns] == ["boom", "b.om"]
    assert dataclasses.replace(entry, source="x.toml").source == "x.toml"
    assert sys.version_info >= (3, 12)
