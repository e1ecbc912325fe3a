"""Rule table for the readers of SGLang's, mbridge's and SLIME's / Miles' model lists
(rlcheck.probes.recipe.model_registry): each shape of source they meet (aliases by import and by assignment,
chained; attribute references; decorators called by name or by attribute; several `any(... in model_name ...)`
tuples; dict literals among other assignments) and the committed file's checks, with their whole messages."""

from __future__ import annotations

import pytest

from rlcheck.probes.recipe import model_registry as mr
from rlcheck.probes.recipe.model_registry import KnownList


@pytest.mark.parametrize(("modules", "names"), [
    # an alias of an alias is the class it ends at
    ({"a.py": "class A: pass\nB = A\nC = B\nEntryClass = C\n"}, {"A"}),
    ({"a.py": "from x import Real as Alias, Other\nEntryClass = [Alias, Other]\n"}, {"Real", "Other"}),
    # attribute references by their last name; a string or a call is no class
    ({"a.py": "import models\nEntryClass = [models.Foo, 'Bar', make()]\n"}, {"Foo"}),
    ({"a.py": "class A: pass\nEntryClass = (A,)\n"}, {"A"}),
    # other module-level assignments are no EntryClass, an attribute target neither
    ({"a.py": "class A: pass\n_HELPER = Other\nconfig.default = A\nEntryClass = A\n"}, {"A"}),
    # a module that extends its EntryClass keeps the earlier one's class
    ({"a.py": "class A: pass\nclass B: pass\nEntryClass = A\nEntryClass = [EntryClass, B]\n"}, {"A", "B"}),
    ({"a.py": "\ufeffclass A: pass\nEntryClass = A\n", "b.py": "class Z: pass\n"}, {"A"}),
    # sub-packages are not scanned (SGLang's registry imports the package's modules only)
    ({"a.py": "EntryClass = A\n", "sub/b.py": "EntryClass = B\n"}, {"A"}),
])
def test_sglang_architectures(tmp_path, modules, names):
    for rel, text in modules.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert mr.sglang_architectures(tmp_path) == names


@pytest.mark.parametrize(("source", "types"), [
    ('@register_model("t1")\nclass X: pass\n', {"t1"}),
    ('@registry.register_model(["t2", "t3"])\nclass X: pass\n', {"t2", "t3"}),
    # only strings: a name or a number in the list is no model type
    ('@register_model(("t4", NAME, 5))\nclass X: pass\n', {"t4"}),
    ('@other("t5")\n@factory()("t6")\n@register_model()\nclass X: pass\n', set()),
])
def test_mbridge_model_types(tmp_path, source, types):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.py").write_text(source, encoding="utf-8")
    assert mr.mbridge_model_types(tmp_path) == types


@pytest.mark.parametrize(("source", "fragments"), [
    ('def _convert_to_hf_core(args, model_name, name, param):\n'
     '    if any(f in model_name for f in ("aa", "bb")):\n        pass\n'
     '    elif any(g in model_name for g in ("cc",)):\n        pass\n'
     '    elif "dd" in model_name:\n        pass\n'
     '    if "q_proj" in name:\n        pass\n', {"aa", "bb", "cc", "dd"}),
    ('def other(model_name):\n    return "x" in model_name\n', set()),
])
def test_converter_fragments(source, fragments):
    assert mr.converter_fragments(source) == fragments


@pytest.mark.parametrize(("source", "keys"), [
    ('config.x = {"no": 1}\nOTHER = {"other": 1}\n_LOADERS = {"a": 1, "b": 2, 3: 4, **EXTRA}\n', {"a", "b"}),
    ('_LOADERS = make()\n', set()),
    ('OTHER = {"other": 1}\n', set()),
])
def test_dict_keys(source, keys):
    assert mr.dict_keys(source, "_LOADERS") == keys


def test_load_reads_each_table(tmp_path):
    good = tmp_path / "s.toml"
    good.write_text('[sglang]\nsource = "sglang 1"\nnames = ["A", "B"]\n[mbridge]\nsource = "m"\nnames = ["t"]\n',
                    encoding="utf-8")
    assert mr.load(good) == {"sglang": KnownList(kind="sglang", names=frozenset({"A", "B"}), source="sglang 1"),
                             "mbridge": KnownList(kind="mbridge", names=frozenset({"t"}), source="m")}


@pytest.mark.parametrize("table", [
    'names = ["A"]', 'source = ""\nnames = ["A"]', 'source = 5\nnames = ["A"]', 'source = "x"',
    'source = "x"\nnames = []', 'source = "x"\nnames = "A"', 'source = "x"\nnames = ["A", ""]',
    'source = "x"\nnames = ["A", 3]',
])
def test_load_refuses_a_table_without_source_or_names(tmp_path, table):
    bad = tmp_path / "s.toml"
    bad.write_text(f'[mbridge]\nsource = "ok"\nnames = ["t"]\n[sglang]\n{table}\n', encoding="utf-8")
    with pytest.raises(ValueError) as exc:
        mr.load(bad)
    assert str(exc.value) == "s.toml: [sglang] needs a non-empty source and a non-empty list of names"


def test_load_refuses_unknown_tables(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text('[vllm]\nsource = "x"\nnames = ["A"]\n[sglang]\nsource = "x"\nnames = ["A"]\n', encoding="utf-8")
    with pytest.raises(ValueError) as exc:
        mr.load(bad)
    assert str(exc.value) == ("s.toml: unknown tables ['vllm']: only sglang, mbridge, slime_hf_to_megatron, "
                              "slime_megatron_to_hf, miles_megatron_to_hf")
