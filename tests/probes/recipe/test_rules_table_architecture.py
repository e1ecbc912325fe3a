"""Rule table for the checkpoint's architecture against the engine, the bridge and the converters
(rlcheck.probes.recipe.architecture): the whole verdict for each branch (not here, unreadable, unnamed, native or
fallback engine, converter or bridge gap), the config class names a converter is given (--model-name, auto_map,
model_type with and without _ and -), SLIME's and Miles' fragments, and which lists are judged: an installed
package's own, read from its source, else the committed one. The lists here are small and made up, so each row
says exactly which name decided it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck import catalog
from rlcheck.probes.recipe import architecture, model_registry
from rlcheck.probes.recipe.hf_config import HfConfigObservation, collect_hf_config
from rlcheck.probes.recipe.model_registry import KnownList
from rlcheck.verdict import Status, Verdict

LISTS = {
    "sglang": KnownList(kind="sglang", names=frozenset({"Qwen3ForCausalLM", "LlamaForCausalLM",
                                                        "Qwen3VLForConditionalGeneration"}), source="sg 1"),
    "mbridge": KnownList(kind="mbridge", names=frozenset({"qwen3"}), source="mb 2"),
    "slime_hf_to_megatron": KnownList(kind="slime_hf_to_megatron", names=frozenset({"qwen3"}), source="s0"),
    "slime_megatron_to_hf": KnownList(kind="slime_megatron_to_hf",
                                      names=frozenset({"qwen3", "glm4moe", "deepseekv3"}), source="slime 3"),
    "miles_megatron_to_hf": KnownList(kind="miles_megatron_to_hf", names=frozenset({"qwen3", "glm4_moe"}),
                                      source="miles 4"),
}
PATH = "/m/config.json"
REMEDY = catalog.get("architecture-unsupported").remedy
FALLBACK = "runs only on its Transformers fallback, where the model allows one"
UNSUPPORTED = "the first weight update raises 'Unsupported model'"


def _judge(config: dict | None, *argv: str, framework: str = "slime", hf: HfConfigObservation | None = None) -> Verdict:
    obs = architecture.ArchitectureObservation(hf=hf or HfConfigObservation(path=PATH, config=config), lists=LISTS)
    return architecture.evaluate_architecture(obs, list(argv), framework, "job")


@pytest.mark.parametrize(("config", "argv", "framework", "status", "summary"), [
    ({"architectures": ["Qwen3ForCausalLM", "LlamaForCausalLM"], "model_type": "qwen3"}, (), "slime", Status.PASS,
     "job: Qwen3ForCausalLM, LlamaForCausalLM native in SGLang; converter fragment 'qwen3' in qwen3config "
     "(config.json)"),
    # a vision-language checkpoint: its own architecture, model_type qwen3_vl; SLIME drops the _ before matching
    ({"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl", "text_config": {}}, (),
     "slime", Status.PASS,
     "job: Qwen3VLForConditionalGeneration native in SGLang; converter fragment 'qwen3' in qwen3vlconfig "
     "(config.json)"),
    # MoE: SLIME looks for 'glm4moe' in the names without _; Miles for 'glm4_moe' in both spellings
    ({"architectures": ["LlamaForCausalLM"], "model_type": "glm4_moe"}, (), "slime", Status.PASS,
     "job: LlamaForCausalLM native in SGLang; converter fragment 'glm4moe' in glm4moeconfig (config.json)"),
    ({"architectures": ["LlamaForCausalLM"], "model_type": "glm4_moe"}, (), "miles", Status.PASS,
     "job: LlamaForCausalLM native in SGLang; converter fragment 'glm4_moe' in glm4_moeconfig/glm4moeconfig "
     "(config.json)"),
    # --model-name wins over the config; SLIME drops - and _ from it too
    ({"architectures": ["LlamaForCausalLM"], "model_type": "gemma3"}, ("--model-name", "Deep-Seek_V3Config"), "slime",
     Status.PASS, "job: LlamaForCausalLM native in SGLang; converter fragment 'deepseekv3' in deepseekv3config "
                  "(config.json)"),
    # a model_type without architectures is judged (the engine falls back)
    ({"model_type": "qwen3"}, (), "slime", Status.WARN,
     f"job: {PATH}: SGLang (sg 1) has no native architecture: it {FALLBACK}; converter fragment 'qwen3' in "
     "qwen3config"),
    ({"architectures": ["Qwen3ForTokenClassification", 7], "model_type": "qwen3"}, (), "slime", Status.WARN,
     f"job: {PATH}: SGLang (sg 1) has no native Qwen3ForTokenClassification: it {FALLBACK}; converter fragment "
     "'qwen3' in qwen3config"),
    # architectures without model_type: no config class to give the converter
    ({"architectures": ["Qwen3ForCausalLM"]}, (), "slime", Status.FAIL,
     f"job: {PATH}: Slime's Megatron-to-HF converter (slime 3) names none of no config class: {UNSUPPORTED}"),
    ({"architectures": ["Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"], "model_type": "gemma3"}, (), "miles",
     Status.FAIL,
     f"job: {PATH}: Miles's Megatron-to-HF converter (miles 4) names none of gemma3config: {UNSUPPORTED}; SGLang "
     f"(sg 1) has no native Gemma3ForCausalLM, Gemma3ForConditionalGeneration: it {FALLBACK}"),
    # Miles keeps the _ spelling beside the plain one: both named
    ({"architectures": ["LlamaForCausalLM"], "model_type": "gemma_3"}, (), "miles", Status.FAIL,
     f"job: {PATH}: Miles's Megatron-to-HF converter (miles 4) names none of gemma3config, gemma_3config: "
     f"{UNSUPPORTED}"),
    # bridge mode: mbridge's model types (SLIME); Miles' Megatron-Bridge has no shipped list
    ({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}, ("--megatron-to-hf-mode", "bridge"), "slime",
     Status.PASS, "job: Qwen3ForCausalLM native in SGLang; model_type qwen3 in mbridge (mb 2) (config.json)"),
    ({"architectures": ["Qwen3ForCausalLM"], "model_type": "gemma3"}, ("--megatron-to-hf-mode", "bridge"), "miles",
     Status.PASS, "job: Qwen3ForCausalLM native in SGLang; Megatron-Bridge (Miles' bridge mode) not judged: its list "
                  "is not shipped (config.json)"),
    ({"architectures": ["Qwen3ForCausalLM"], "model_type": "gemma3"}, ("--megatron-to-hf-mode", "bridge"), "slime",
     Status.FAIL, f"job: {PATH}: mbridge has no bridge for model_type gemma3 (mb 2): AutoBridge raises "
                  "'Unregistered model type'"),
    ({"architectures": ["Qwen3ForCausalLM"]}, ("--megatron-to-hf-mode", "bridge"), "slime", Status.FAIL,
     f"job: {PATH}: mbridge has no bridge for model_type (none) (mb 2): AutoBridge raises 'Unregistered model type'"),
    # another mode than bridge is the converter's
    ({"architectures": ["Qwen3ForCausalLM"], "model_type": "gemma3"}, ("--megatron-to-hf-mode", "raw"), "slime",
     Status.FAIL, f"job: {PATH}: Slime's Megatron-to-HF converter (slime 3) names none of gemma3config: "
                  f"{UNSUPPORTED}"),
    ({"architectures": [3], "model_type": ""}, (), "slime", Status.UNKNOWN,
     f"job: {PATH} names no architectures and no model_type"),
    ({"architectures": None}, (), "slime", Status.UNKNOWN, f"job: {PATH} names no architectures and no model_type"),
])
def test_the_whole_verdict(config, argv, framework, status, summary):
    verdict = _judge(config, *argv, framework=framework)
    assert (verdict.status, verdict.summary) == (status, summary)
    assert verdict.failure_id == "architecture-unsupported"
    assert verdict.remedy == (REMEDY if status in (Status.WARN, Status.FAIL) else "")


@pytest.mark.parametrize(("hf", "status", "summary"), [
    (HfConfigObservation(path=PATH, error="/m does not exist on this machine", not_here=True), Status.SKIP,
     "job: the checkpoint is not on this machine (/m does not exist on this machine): judged where it is mounted"),
    (HfConfigObservation(path=PATH, error="not a JSON object"), Status.UNKNOWN,
     f"job: cannot read {PATH} (not a JSON object): the architecture is not judged"),
    (HfConfigObservation(path="", error="the argv has no --hf-checkpoint"), Status.UNKNOWN,
     "job: cannot read --hf-checkpoint (the argv has no --hf-checkpoint): the architecture is not judged"),
])
def test_a_config_not_read_is_not_judged(hf, status, summary):
    verdict = _judge(None, hf=hf)
    assert (verdict.status, verdict.summary, verdict.remedy) == (status, summary, "")


@pytest.mark.parametrize(("config", "argv", "names"), [
    ({"model_type": "Foo-Bar_Baz"}, [], {"foo-bar_bazconfig", "foobarbazconfig"}),
    ({"auto_map": {"AutoConfig": "configuration_kimi.KimiK25Config"}, "model_type": "x"}, [], {"kimik25config"}),
    ({"auto_map": {"AutoConfig": "a.b.FooConfig"}}, [], {"fooconfig"}),
    ({"auto_map": {"AutoConfig": "FooConfig"}}, [], {"fooconfig"}),  # no module part
    ({"auto_map": {"AutoConfig": ["a.X", "a.Y"]}, "model_type": "qwen3"}, [], {"qwen3config"}),
    ({"auto_map": "a.X", "model_type": "qwen3"}, [], {"qwen3config"}),
    ({"model_type": "x", "auto_map": {"AutoConfig": "a.B"}}, ["--model-name", "Glm4MoeConfig"], {"glm4moeconfig"}),
    ({}, [], set()),
])
def test_config_class_names(config, argv, names):
    assert architecture.config_class_names(config, argv) == names


CONVERTER = '''
def _convert_to_hf_core(args, model_name, name, param):
    if "toy" in model_name:
        pass
'''


def _packages(monkeypatch, tmp_path: Path, installed: dict[str, dict[str, str]]) -> None:
    """Each package name -> {file under its root: text}; the others are not installed."""
    roots = {}
    for package, files in installed.items():
        root = tmp_path / package
        root.mkdir()
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        roots[package] = root
    monkeypatch.setattr(architecture, "package_root", roots.get)


@pytest.mark.parametrize(("installed", "kind", "names", "where"), [
    ({"sglang": {"sglang/srt/models/a.py": "class A: pass\nEntryClass = A\n"}}, "sglang", {"A"}, "sglang/srt/models"),
    ({"mbridge": {"mbridge/models/m.py": '@register_model("toy")\nclass M: pass\n'}}, "mbridge", {"toy"},
     "mbridge/models"),
    ({"slime": {architecture.CONVERTERS["slime"]: CONVERTER}}, "slime_megatron_to_hf", {"toy"},
     architecture.CONVERTERS["slime"]),
    ({"miles": {architecture.CONVERTERS["miles"]: CONVERTER}}, "miles_megatron_to_hf", {"toy"},
     architecture.CONVERTERS["miles"]),
])
def test_an_installed_packages_list_is_read_from_its_source(monkeypatch, tmp_path, installed, kind, names, where):
    _packages(monkeypatch, tmp_path, installed)
    (package,) = installed
    assert architecture._installed(kind) == KnownList(kind=kind, names=frozenset(names),
                                                      source=f"installed {tmp_path / package / where}")
    committed = model_registry.load()
    obs = architecture.collect_architecture(["--hf-checkpoint", str(tmp_path / "nowhere")])
    assert obs.lists == {**committed, kind: architecture._installed(kind)}
    assert obs.hf == collect_hf_config(["--hf-checkpoint", str(tmp_path / "nowhere")])


@pytest.mark.parametrize(("installed", "kind"), [
    ({}, "sglang"), ({}, "mbridge"), ({}, "slime_megatron_to_hf"), ({}, "miles_megatron_to_hf"),
    # installed without the folder or file the list is read from
    ({"sglang": {"sglang/other.py": ""}}, "sglang"),
    ({"mbridge": {"mbridge/other.py": ""}}, "mbridge"),
    ({"slime": {"slime/other.py": ""}}, "slime_megatron_to_hf"),
    # a converter whose function names no fragment: the committed list stays
    ({"slime": {architecture.CONVERTERS["slime"]: "def other(): pass\n"}}, "slime_megatron_to_hf"),
    # the hf-to-megatron loaders are never read from an installed package
    ({"slime": {architecture.CONVERTERS["slime"]: CONVERTER}}, "slime_hf_to_megatron"),
])
def test_without_an_installed_list_the_committed_one_is_judged(monkeypatch, tmp_path, installed, kind):
    _packages(monkeypatch, tmp_path, installed)
    assert architecture._installed(kind) is None
    assert architecture.collect_architecture([]).lists[kind] == model_registry.load()[kind]


def test_installed_sources_are_read_as_utf_8_whatever_the_locales_codec(monkeypatch, tmp_path):
    """The sources read are UTF-8 (rlcheck's own model_registry, whose source keys the kept lists; a converter with
    a comment in Chinese): in an ASCII locale (LC_ALL=C without Python's UTF-8 mode) the locale's codec could not
    decode them, and the collector would end in a traceback instead of reading the installed lists."""
    installed = {"sglang": {"sglang/srt/models/a.py": "class A: pass\nEntryClass = A\n"},
                 "slime": {architecture.CONVERTERS["slime"]: "# 转换 GLM-4.5 …\n" + CONVERTER}}
    site = tmp_path / "site"
    for package, files in installed.items():  # packages first on the path: package_root finds them as it finds any
        for rel, text in {f"{package}/__init__.py": "", **files}.items():
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "RLCHECK_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import locale; from rlcheck.probes.recipe import architecture as a; "
            "print(locale.getpreferredencoding(False)); "
            "print(*(sorted(a._installed(k).names) for k in ('sglang', 'slime_megatron_to_hf')))")
    # run from the test's own folder: `python -c` puts its working folder first on the path
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # the child's locale codec is ASCII: the rule is judged where it matters
    assert done.stdout == "ANSI_X3.4-1968\n['A'] ['toy']\n"
    # and here, in-process (where the mutation run sees which tests reach _installed and kept_names): the same
    (tmp_path / "here").mkdir()
    _packages(monkeypatch, tmp_path / "here", installed)
    assert [sorted(architecture._installed(k).names) for k in ("sglang", "slime_megatron_to_hf")] == [["A"], ["toy"]]
