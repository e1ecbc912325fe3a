"""The architecture judge (every branch), and the committed known lists against the upstream sources at hand."""

from __future__ import annotations

import importlib.metadata
import subprocess
from pathlib import Path

import pytest

from rlcheck.probes.node.packages import package_root
from rlcheck.probes.recipe import architecture, model_registry
from rlcheck.probes.recipe.hf_config import collect_hf_config
from rlcheck.verdict import Status, Verdict

CONFIGS = Path(__file__).resolve().parents[2] / "data" / "hf_config"
COMMITTED = model_registry.load()
MIRRORS = Path("/work/.mirror")


def _judge(name: str, *args: str, framework: str = "slime") -> Verdict:
    argv = ["--hf-checkpoint", str(CONFIGS / name), *args]
    obs = architecture.ArchitectureObservation(hf=collect_hf_config(argv), lists=COMMITTED)
    return architecture.evaluate_architecture(obs, argv, framework, "job")


@pytest.mark.parametrize(("name", "args", "framework", "status", "fragment"), [
    ("qwen3-4b", (), "slime", Status.PASS, "converter fragment 'qwen3'"),
    ("qwen3-30b-a3b", (), "miles", Status.PASS, "Qwen3MoeForCausalLM native"),
    ("kimi-k25-remote-code", (), "slime", Status.PASS, "'kimi' in kimik25config"),
    # Miles looks for 'kimi_k25' in the remote config class name 'kimik25config': no converter
    ("kimi-k25-remote-code", (), "miles", Status.FAIL, "names none of kimik25config"),
    ("gemma3-1b", (), "slime", Status.FAIL, "Megatron-to-HF converter"),
    ("gemma3-1b", ("--model-name", "qwen3config"), "slime", Status.PASS, "'qwen3' in qwen3config"),
    ("gemma3-1b", ("--megatron-to-hf-mode", "bridge"), "slime", Status.FAIL, "'Unregistered model type'"),
    ("qwen3-4b", ("--megatron-to-hf-mode", "bridge"), "slime", Status.PASS, "model_type qwen3 in mbridge"),
    ("qwen3-4b", ("--megatron-to-hf-mode", "bridge"), "miles", Status.PASS, "Megatron-Bridge"),
    ("qwen3-token-classification", (), "slime", Status.WARN, "Transformers fallback"),
    ("unnamed", (), "slime", Status.UNKNOWN, "no architectures and no model_type"),
    ("broken", (), "slime", Status.UNKNOWN, "cannot read"),
    ("absent", (), "slime", Status.SKIP, "not on this machine"),
])
def test_architecture_every_branch(name, args, framework, status, fragment):
    verdict = _judge(name, *args, framework=framework)
    assert verdict.status is status, verdict.summary
    assert fragment in verdict.summary
    assert verdict.failure_id == "architecture-unsupported"
    assert (verdict.remedy != "") == (status in (Status.WARN, Status.FAIL))


def test_config_class_names_from_auto_map_model_type_or_model_name():
    assert architecture.config_class_names({"model_type": "qwen3_moe"}, []) == {"qwen3_moeconfig", "qwen3moeconfig"}
    assert architecture.config_class_names({"auto_map": {"AutoConfig": "a.b.FooConfig"}}, []) == {"fooconfig"}
    assert architecture.config_class_names({"model_type": "x"}, ["--model-name", "Glm4MoeConfig"]) == {"glm4moeconfig"}
    assert architecture.config_class_names({}, []) == set()


def test_converter_fragments_read_only_model_name_tests():
    source = '''
def _convert_to_hf_core(args, model_name, name, param):
    if any(f in model_name for f in ("aa", "bb")):
        pass
    elif "cc" in model_name:
        pass
    if "q_proj" in name:
        pass
'''
    assert model_registry.converter_fragments(source) == {"aa", "bb", "cc"}
    assert model_registry.converter_fragments("def other(): pass") == frozenset()


def test_sglang_and_mbridge_readers(tmp_path):
    (tmp_path / "a.py").write_text("\ufeffclass A: pass\nclass B: pass\nC = B\nEntryClass = [A, C]\n")
    (tmp_path / "b.py").write_text("from x import Real as Alias\nEntryClass = Alias\n")
    assert model_registry.sglang_architectures(tmp_path) == {"A", "B", "Real"}
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.py").write_text('@register_model(["t1", "t2"])\nclass X: pass\n@register_model("t3")\n'
                                           "class Y: pass\n")
    assert model_registry.mbridge_model_types(tmp_path) == {"t1", "t2", "t3"}


def test_support_file_refuses_an_empty_or_unknown_table(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text('[sglang]\nsource = "x"\nnames = []\n')
    with pytest.raises(ValueError, match=r"\[sglang\] needs a non-empty source"):
        model_registry.load(bad)
    bad.write_text('[vllm]\nsource = "x"\nnames = ["A"]\n')
    with pytest.raises(ValueError, match="unknown tables"):
        model_registry.load(bad)


def _installed(package: str, distribution: str) -> tuple[Path, str] | None:
    root = package_root(package)
    try:
        return (root, importlib.metadata.version(distribution)) if root else None
    except importlib.metadata.PackageNotFoundError:
        return None


@pytest.mark.parametrize(("kind", "package", "distribution", "folder", "reader"), [
    ("sglang", "sglang", "sglang", "sglang/srt/models", model_registry.sglang_architectures),
    ("mbridge", "mbridge", "mbridge", "mbridge/models", model_registry.mbridge_model_types),
])
def test_committed_list_agrees_with_the_installed_release(kind, package, distribution, folder, reader):
    found = _installed(package, distribution)
    if found is None or f" {found[1]} " not in COMMITTED[kind].source:
        pytest.skip(f"{distribution} of the committed release is not installed here (found {found})")
    assert reader(found[0] / folder) == COMMITTED[kind].names


def _mirror(repo: str, commit: str, path: str) -> str:
    git = MIRRORS / repo / "repo"
    if not git.is_dir():
        pytest.skip(f"no upstream mirror {git}")
    done = subprocess.run(["git", "--git-dir", str(git), "show", f"{commit}:{path}"], capture_output=True,
                          text=True, timeout=60, check=False)
    if done.returncode != 0:
        pytest.skip(f"{repo} {commit}:{path} not in the mirror: {done.stderr.strip()}")
    return done.stdout


@pytest.mark.parametrize(("kind", "repo", "path", "read"), [
    ("slime_hf_to_megatron", "THUDM+slime", "slime/backends/megatron_utils/hf_to_megatron/__init__.py",
     lambda text: model_registry.dict_keys(text, "_LOADERS")),
    ("slime_megatron_to_hf", "THUDM+slime", "slime/backends/megatron_utils/megatron_to_hf/__init__.py",
     model_registry.converter_fragments),
    ("miles_megatron_to_hf", "radixark+miles", "miles/backends/megatron_utils/megatron_to_hf/__init__.py",
     model_registry.converter_fragments),
])
def test_committed_list_agrees_with_the_upstream_commit(kind, repo, path, read):
    commit = COMMITTED[kind].source.split()[1].rstrip(",")
    assert read(_mirror(repo, commit, path)) == COMMITTED[kind].names
