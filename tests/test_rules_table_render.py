"""Rule table for `rlcheck render` (rlcheck.deploy.render): the resources a launch needs (nodes rounded up to whole
ones), the whole document (argv, entrypoint, env, secrets by name only, the manifests), the launcher script a shell
runs exactly, and each output format, an unknown one refused."""

from __future__ import annotations

import dataclasses
import json
import shlex

import pytest
import yaml

from rlcheck import hardware, recipes
from rlcheck.cluster import launch
from rlcheck.deploy import manifests, render


@dataclasses.dataclass
class _Recipe:
    """The parts of a Recipe resources() reads."""

    placement: object
    parallel: object
    data_parallel: int


@pytest.mark.parametrize(("gpus", "nodes"), [(1, 1), (8, 1), (9, 2), (16, 2), (17, 3)])
def test_resources_nodes_rounded_up_and_every_field_from_its_source(gpus, nodes):
    placement = type("P", (), {"placement_group_gpus": gpus, "actor_gpus": 5, "rollout_gpus": 3})()
    parallel = type("Par", (), {"tp": 2, "pp": 3, "cp": 4, "ep": 6})()
    got = render.resources(_Recipe(placement, parallel, 7), "h200")  # type: ignore[arg-type]
    assert got == {"placement_group_gpus": gpus, "actor_gpus": 5, "rollout_gpus": 3, "gpus_per_node": 8,
                   "gpu_nodes": nodes, "efa_interfaces_per_node": 16, "tp": 2, "pp": 3, "cp": 4, "ep": 6,
                   "data_parallel": 7}


@pytest.mark.parametrize(("recipe_id", "hw", "image"), [
    ("qwen3-30b-a3b-disaggregated", "gb200", "img:6"), ("qwen3-4b-colocated", "h200", None),
])
def test_document_whole(recipe_id, hw, image):
    profile = hardware.get_profile(hw)
    recipe = recipes.get(recipe_id, profile)
    got = render.document(recipe_id, hw) if image is None else render.document(recipe_id, hw, image)
    image = image or manifests.DEFAULT_IMAGE
    assert got == {
        "recipe": recipe_id, "hardware": hw, "argv": recipe.argv(), "entrypoint": launch.entrypoint(recipe.argv()),
        "runtime_env": recipe.runtime_env(),
        "secret_env": {"HF_TOKEN": "<from the workers' environment: Kubernetes secret hf-token, key hf_token; "
                                   "never rendered>"},
        "resources": render.resources(recipe, hw),
        "manifests": {"rayjob": manifests.ray_job(recipe, profile, image),
                      "raycluster": manifests.ray_cluster(recipe, profile, image)}}


def test_document_unknown_recipe_or_hardware_raises_naming_it():
    with pytest.raises(KeyError, match="qwen3-8b"):
        render.document("qwen3-8b", "h200")
    with pytest.raises(KeyError, match="h300"):
        render.document("qwen3-4b-colocated", "h300")


def _doc(env: dict, secrets: dict) -> dict:
    return {"recipe": "r1", "hardware": "h200", "runtime_env": {"env_vars": env}, "secret_env": secrets,
            "entrypoint": "python3 train.py --x 'a b'"}


@pytest.mark.parametrize(("env", "secrets", "secret_line", "exports"), [
    ({}, {}, "none", []),
    ({"A": "1", "B": "two words", "C": "$(rm -rf /)"}, {"HF_TOKEN": "x", "WANDB_API_KEY": "y"},
     "HF_TOKEN, WANDB_API_KEY", ["export A=1", "export B='two words'", "export C='$(rm -rf /)'"]),
])
def test_as_shell_whole_launcher(env, secrets, secret_line, exports):
    assert render.as_shell(_doc(env, secrets)) == "\n".join([
        "#!/usr/bin/env bash", "# rlcheck render r1 --hardware h200 --format shell",
        f"# secrets come from the environment, never this file: {secret_line}", "set -euo pipefail", *exports,
        "exec python3 train.py --x 'a b' \"$@\""]) + "\n"


def test_as_shell_every_value_reads_back_exactly():
    env = {"A": "it's", "B": "*", "C": "a\nb", "D": ""}
    text = render.as_shell(_doc(env, {}))
    body = text.split("set -euo pipefail\n", 1)[1].rsplit("exec ", 1)[0]
    tokens = shlex.split(body)
    assert tokens[0::2] == ["export"] * len(env)
    assert dict(t.split("=", 1) for t in tokens[1::2]) == env


def test_dump_each_format():
    doc = _doc({"A": "1"}, {"HF_TOKEN": "<by name>"})
    assert render.FORMATS == ("json", "yaml", "shell")
    assert render.dump(doc, "json") == json.dumps(doc, indent=2) + "\n"
    assert yaml.safe_load(render.dump(doc, "yaml")) == doc
    assert render.dump(doc, "yaml") == yaml.safe_dump(doc, sort_keys=False, width=120)
    assert render.dump(doc, "shell") == render.as_shell(doc)


@pytest.mark.parametrize("fmt", ["toml", "JSON", ""])
def test_dump_unknown_format_refused(fmt):
    with pytest.raises(ValueError) as raised:
        render.dump(_doc({}, {}), fmt)
    assert str(raised.value) == f"format={fmt!r}: one of json, yaml, shell"
