"""The known-failure catalogue: every shipped file loads as the tool loads it, and bad entries are refused."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rlcheck import catalog, scan_engines
from rlcheck.scan import Matcher

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = catalog.load_catalog()
SEED_IDS = {
    "ray-argv-loss", "model-args-glob", "tms-cu12-preload", "tms-loader-unresolved", "numpy2-megatron",
    "uvicorn-log-level", "sglang-health-hang", "driver-gpu-probe", "cuda-device-max-connections",
    "mbridge-missing", "megatron-training-missing", "sglang-dead-flag", "placement-group-oversubscribed",
    "batch-size-mismatch", "sparse-mla-bwd-nan", "pp-split-skip-layer", "pp-stage-oom", "kv-pool-truncation",
    "engine-larger-than-node", "deepep-gb300-megatron", "reward-silent-zero",
}


def test_catalog_holds_every_seed_failure():
    assert SEED_IDS <= set(ENTRIES), f"missing: {sorted(SEED_IDS - set(ENTRIES))}"


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=list(ENTRIES))
def test_catalog_examples_found_by_scanner(entry):
    matcher = Matcher(ENTRIES)
    for line in entry.examples:
        assert entry.id in matcher.match_line(line), line
        found = [ids for _, _, ids in matcher.scan_block(f"noise\n{line}\nmore noise\n".encode())]
        assert found and entry.id in found[0], line


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=list(ENTRIES))
def test_catalog_near_misses_not_attributed(entry):
    matcher = Matcher(ENTRIES)
    for line in entry.near_misses:
        assert entry.id not in matcher.match_line(line), line


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


@pytest.mark.parametrize("entry", ENTRIES.values(), ids=list(ENTRIES))
def test_catalog_reproducer_ids_exist(entry):
    for test_id in filter(None, (entry.reproducer,)):
        file, _, func = test_id.partition("::")
        assert (ROOT / file).is_file(), f"{entry.id}: {file} does not exist"
        assert func in _test_functions(ROOT / file), f"{entry.id}: {test_id} is not a test function"


BAD_ENTRIES = [
    ("bad_regex.toml", "signatures = ['(unclosed']", "does not compile"),
    ("example_unmatched.toml", "examples = ['something else entirely']", "matches none of the signatures"),
    ("near_miss_matches.toml", "near_misses = ['boom happened']", "near miss 'boom happened' matches"),
    ("bad_layer.toml", "layer = 'gpu'", "layer='gpu': one of image, recipe"),
    ("bad_specifier.toml", "affected = [{ package = 'ray', specifier = 'two point oh' }]", "PEP 440"),
    ("bad_test_id.toml", "reproducer = 'not a test id'", "reproducer='not a test id'"),
    ("unknown_field.toml", "colour = 'red'", "unknown field(s) ['colour']: allowed are id, layer,"),
    ("old_check_field.toml", "check = 'checks/test_image.py::test_image_x'", "unknown field(s) ['check']"),
    ("unknown_trait.toml", "only_when = 'moe'", "only_when='moe': one of dsa"),
    ("unknown_family.toml", "family = 'network'", "family='network': one of nccl, cuda"),
    ("unknown_role.toml", "role = 'symptom'", "role='symptom': one of cause, consequence, invariant, fallback"),
    ("fallback_role_taken.toml", "role = 'fallback'", "role='fallback': 'fallback' is the uncatalogued entry's alone"),
    ("site_without_commit.toml", "raise_sites = ['pytorch/pytorch torch/csrc/x.cpp::f']",
     "raise_sites entry 'pytorch/pytorch torch/csrc/x.cpp::f': 'owner/repo@<commit, 7-40 hex> path::function'"),
    ("site_without_function.toml", "raise_sites = ['pytorch/pytorch@cf1380dfb6c8 torch/csrc/x.cpp']",
     "raise_sites entry 'pytorch/pytorch@cf1380dfb6c8 torch/csrc/x.cpp'"),
    ("site_not_a_list.toml", "raise_sites = 'pytorch/pytorch@cf1380dfb6c8 x.cpp::f'", "must be a list of strings"),
]
GOOD = {
    "id": "'boom'", "layer": "'image'", "severity": "'crash'", "title": "'Boom'", "signatures": "['boom']",
    "examples": "['boom happened']", "near_misses": "['bang']", "cause": "'c'", "remedy": "'r'",
}


def _write_entry(path: Path, override: str) -> None:
    key = override.split("=", 1)[0].strip()
    fields = {**GOOD, key: override.split("=", 1)[1].strip()}
    path.write_text("[[failure]]\n" + "\n".join(f"{k} = {v}" for k, v in fields.items()) + "\n")


@pytest.mark.parametrize(("file", "override", "message"), BAD_ENTRIES, ids=[b[0] for b in BAD_ENTRIES])
def test_catalog_bad_entry_refused_naming_file_and_id(tmp_path, file, override, message):
    _write_entry(tmp_path / file, override)
    with pytest.raises(catalog.CatalogError) as err:
        catalog.load_catalog(tmp_path)
    assert str(err.value).startswith(f"{file}: entry 'boom': ")
    assert message in str(err.value)


def test_catalog_duplicate_id_refused(tmp_path):
    _write_entry(tmp_path / "a.toml", "title = 'one'")
    _write_entry(tmp_path / "b.toml", "title = 'two'")
    with pytest.raises(catalog.CatalogError, match=r"b.toml: entry 'boom': duplicate id \(first in a.toml\)"):
        catalog.load_catalog(tmp_path)


def test_catalog_unreadable_toml_refused(tmp_path):
    (tmp_path / "broken.toml").write_text("[[failure]\nid = ")
    with pytest.raises(catalog.CatalogError, match="broken.toml: cannot read catalogue file"):
        catalog.load_catalog(tmp_path)


@pytest.mark.parametrize("load", [catalog.load_catalog, catalog.validate_catalog], ids=["load", "validate"])
@pytest.mark.parametrize(("name", "write", "message"), [
    # a link whose file was moved away: the folder lists it, nothing can be read
    ("gone.toml", lambda p: p.symlink_to(p.parent / "moved-away"), "{path}: cannot read catalogue file: [Errno 2]"),
    ("latin1.toml", lambda p: p.write_bytes("[[failure]]\nid = 'caf\xe9'\n".encode("latin-1")),
     "{path}: cannot read catalogue file: 'utf-8' codec can't decode byte 0xe9"),
    ("broken.toml", lambda p: p.write_text("[[failure]\nid = "), "{path}: cannot read catalogue file: "),
    ("single.toml", lambda p: p.write_text("[failure]\nid = 'boom'\n"),
     "single.toml: 'failure' is a single table ([failure]); entries are an array of tables: write [[failure]]"),
    ("extra.toml", lambda p: p.write_text("[meta]\nx = 1\n"),
     "extra.toml: unknown top-level keys ['meta']: only [[failure]] tables"),
])
def test_catalog_file_that_cannot_be_read_refused_naming_it(tmp_path, load, name, write, message):
    """load_catalog and validate_catalog (the tests' full validation) refuse a catalogue file alike, naming it."""
    _write_entry(tmp_path / "good.toml", "title = 'fine'")
    write(tmp_path / name)
    with pytest.raises(catalog.CatalogError) as err:
        load(tmp_path)
    assert str(err.value).startswith(message.format(path=tmp_path / name))


@pytest.mark.parametrize(("specifier", "version", "inside"), [
    (">=0.1.9.dev0,<0.1.11", "0.1.9", True), (">=0.1.9.dev0,<0.1.11", "0.1.15", False),
    (">=2.0", "1.26.4", False), (">=2.0", "2.2.6", True), ("<0.17", "0.16.1", True),
])
def test_catalog_affected_range(specifier, version, inside):
    assert catalog.Affected(package="x", specifier=specifier).contains(version) is inside


def test_catalog_unknown_id_lists_valid():
    with pytest.raises(KeyError, match="unknown failure id 'nope': valid are architecture-unsupported, "
                                       "batch-size-mismatch"):
        catalog.get("nope")


def test_catalog_docs_page_is_current():
    from rlcheck.cli import catalog_markdown

    page = ROOT / "docs" / "known-failures.md"
    assert page.read_text(encoding="utf-8") == catalog_markdown(ENTRIES), \
        "docs/known-failures.md is stale: run `rlcheck docs --write`"



FAST_ENGINES = [e for e in scan_engines.ENGINES if e != "re"]


@pytest.mark.parametrize(("override", "message"), [
    ("title = 5", "title=5: must be a string"),
    ("examples = 'boom happened'", "examples='boom happened': must be a list of strings"),
    ("near_misses = ['bang', 7]", "near_misses[1]=7: must be a string"),
    ("affected = [{ package = 'ray', specifier = 2 }]", "specifier=2: must be a string"),
    ("affected = [{ package = 'ray', specifier = '>=2', note = 'x' }]", "unknown field(s) ['note']"),
])
def test_catalog_field_types_checked_at_load(tmp_path, override, message):
    _write_entry(tmp_path / "typed.toml", override)
    with pytest.raises(catalog.CatalogError) as err:
        catalog.load_catalog(tmp_path)
    assert str(err.value).startswith("typed.toml: entry 'boom': ") and message in str(err.value)


@pytest.mark.skipif(not FAST_ENGINES, reason="needs hyperscan or google-re2 installed: found only Python's re")
def test_catalog_signature_the_fast_engine_rejects_refused(tmp_path):
    # Python's re accepts a look-ahead; hyperscan and re2 do not, and the scanner runs with them.
    _write_entry(tmp_path / "lookahead.toml", "signatures = ['boom(?= happened)']")
    with pytest.raises(catalog.CatalogError) as err:
        catalog.load_catalog(tmp_path)
    assert f"signature 'boom(?= happened)' does not compile with {FAST_ENGINES[0]}" in str(err.value)


def test_catalog_single_table_and_non_utf8_refused(tmp_path):
    (tmp_path / "single.toml").write_text("[failure]\nid = 'boom'\n")
    with pytest.raises(catalog.CatalogError, match=r"single.toml: .* write \[\[failure\]\]"):
        catalog.load_catalog(tmp_path)
    (tmp_path / "single.toml").unlink()
    (tmp_path / "latin1.toml").write_bytes("[[failure]]\nid = 'caf\xe9'\n".encode("latin-1"))
    with pytest.raises(catalog.CatalogError, match="latin1.toml: cannot read catalogue file: 'utf-8' codec"):
        catalog.load_catalog(tmp_path)


@pytest.mark.parametrize(("argv", "traits"), [
    (["--sglang-attention-backend", "nsa"], {"dsa"}),
    (["--sglang-attention-backend", "fa3"], set()),
    (["--sglang-nsa-prefill-backend", "flashmla_sparse"], {"dsa"}),
    (["--spec", "miles_plugins.models.glm5.glm5", "get_glm5_spec"], {"dsa"}),
    (["--spec", "slime_plugins.models.qwen3_next", "get_qwen3_next_spec"], set()),
    (["--sglang-attention-backend"], set()),
    (["--attention-backend", "nsa"], set()),
    ([], set()),
])
def test_catalog_job_traits_read_from_the_argv(argv, traits):
    assert catalog.job_traits(argv) == frozenset(traits)


def test_catalog_trait_entries_share_their_line_with_a_general_entry():
    # An entry tied to a trait must leave its lines to a general entry elsewhere, or a line goes unnamed.
    from rlcheck.scan import Matcher

    matcher = Matcher()
    for entry in ENTRIES.values():
        if entry.only_when:
            for line in entry.examples:
                general = [i for i in matcher.match_line(line) if not ENTRIES[i].only_when]
                assert general, f"{entry.id}: example {line!r} is named by no general entry"
