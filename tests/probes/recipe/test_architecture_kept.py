"""The installed SGLang's and mbridge's model lists kept per image (rlcheck/probes/recipe/architecture.py
kept_names): read once, read back while every module of the folder is the same, read again when one changes (for
SGLang only its top-level modules count, as its registry scans; mbridge's sub-packages count)."""

from __future__ import annotations

import json

import pytest

from rlcheck.probes.recipe import architecture, model_registry
from rlcheck.repro import image_facts

pytestmark = pytest.mark.usefixtures("facts_folder")


def _counting(reader):
    calls = []

    def read(models):
        calls.append(models)
        return reader(models)

    return read, calls


@pytest.mark.parametrize(("kind", "reader", "pattern", "module", "sub_counts"), [
    ("sglang", model_registry.sglang_architectures, "*.py", "class A: pass\nEntryClass = A\n", False),
    ("mbridge", model_registry.mbridge_model_types, "**/*.py", "@register_model('a_type')\nclass A: pass\n", True),
])
def test_kept_names_read_once_then_again_only_when_a_module_changes(tmp_path, kind, reader, pattern, module,
                                                                    sub_counts):
    models = tmp_path / "models"
    (models / "sub").mkdir(parents=True)
    (models / "a.py").write_text(module)
    read, calls = _counting(reader)
    first = architecture.kept_names(kind, models, read, pattern)
    assert first == reader(models) and first and len(calls) == 1
    assert architecture.kept_names(kind, models, read, pattern) == first and len(calls) == 1
    (models / "sub" / "b.py").write_text("x = 1\n")
    architecture.kept_names(kind, models, read, pattern)
    assert len(calls) == (2 if sub_counts else 1)
    (models / "a.py").write_text(module + "# changed\n")
    architecture.kept_names(kind, models, read, pattern)
    assert len(calls) == (3 if sub_counts else 2)


def test_no_cache_reads_every_time(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "a.py").write_text("class A: pass\nEntryClass = A\n")
    read, calls = _counting(model_registry.sglang_architectures)
    image_facts.switch_off("--no-cache")
    assert architecture.kept_names("sglang", models, read, "*.py") == frozenset({"A"})
    assert architecture.kept_names("sglang", models, read, "*.py") == frozenset({"A"})
    assert len(calls) == 2


@pytest.mark.parametrize(("kind", "folder", "module", "names"), [
    ("sglang", "sglang/srt/models", "class Qwen3ForCausalLM: pass\nEntryClass = Qwen3ForCausalLM\n",
     ["Qwen3ForCausalLM"]),
    ("mbridge", "mbridge/models", "@register_model('qwen3')\nclass Qwen3Bridge: pass\n", ["qwen3"]),
])
def test_an_installed_list_is_kept_under_its_kinds_name(monkeypatch, tmp_path, facts_folder, kind, folder, module,
                                                        names):
    """Each package's list is its own fact in the image's facts folder ('fact:sglang-models', 'fact:mbridge-models'):
    the entry names what it holds."""
    models = tmp_path / "site" / folder
    models.mkdir(parents=True)
    (models / "qwen3.py").write_text(module)
    monkeypatch.setattr(architecture, "package_root", {kind: tmp_path / "site"}.get)
    assert architecture._installed(kind).names == frozenset(names)
    (entry,) = facts_folder.glob("*.json")
    body = json.loads(entry.read_text())["body"]
    assert (body["nodeid"], body["payloads"]) == (f"fact:{kind}-models", [{"fact": {"names": names}}])


def test_kinds_reading_one_folder_are_kept_apart(tmp_path):
    """Two lists read from the same modules by different readers are two facts: neither is read back as the other."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "qwen3.py").write_text("@register_model('qwen3')\nclass Qwen3ForCausalLM: pass\n"
                                     "EntryClass = Qwen3ForCausalLM\n")
    assert architecture.kept_names("sglang", models, model_registry.sglang_architectures, "*.py") == frozenset(
        {"Qwen3ForCausalLM"})
    assert architecture.kept_names("mbridge", models, model_registry.mbridge_model_types, "*.py") == frozenset(
        {"qwen3"})


@pytest.mark.parametrize(("kind", "folder", "first", "second", "names"), [
    ("sglang", "sglang/srt/models", "class Qwen3ForCausalLM: pass\nEntryClass = Qwen3ForCausalLM\n",
     "class Qwen3ForCausalLM: pass\nclass Qwen3MoeForCausalLM: pass\nEntryClass = [Qwen3ForCausalLM, "
     "Qwen3MoeForCausalLM]\n", {"Qwen3ForCausalLM", "Qwen3MoeForCausalLM"}),
    ("mbridge", "mbridge/models", "@register_model('qwen3')\nclass Qwen3Bridge: pass\n",
     "@register_model('qwen3')\nclass Qwen3Bridge: pass\n@register_model('qwen3_moe')\nclass Qwen3MoeBridge: pass\n",
     {"qwen3", "qwen3_moe"}),
])
def test_an_installed_list_is_read_again_when_its_package_module_changes(monkeypatch, tmp_path, kind, folder, first,
                                                                         second, names):
    """_installed keys the kept list on the package's own .py modules: an image whose model module gained an
    architecture reads it, not the list kept from before."""
    models = tmp_path / "site" / folder
    models.mkdir(parents=True)
    (models / "qwen3.py").write_text(first)
    monkeypatch.setattr(architecture, "package_root", {kind: tmp_path / "site"}.get)
    before = architecture._installed(kind).names
    assert len(before) == 1 and before < frozenset(names)
    (models / "qwen3.py").write_text(second)
    assert architecture._installed(kind).names == frozenset(names)
