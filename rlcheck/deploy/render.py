"""`rlcheck render RECIPE --hardware NAME`: the exact argv, runtime env, resources and KubeRay manifests."""

from __future__ import annotations

import json
import math
import shlex
from typing import Any

from rlcheck import recipes
from rlcheck.cluster import launch
from rlcheck.deploy import manifests, yaml_text
from rlcheck.hardware import get_profile
from rlcheck.recipes.recipe import Recipe

FORMATS = ("json", "yaml", "shell")


def resources(recipe: Recipe, profile_name: str) -> dict[str, Any]:
    hw = get_profile(profile_name)
    pl = recipe.placement
    return {"placement_group_gpus": pl.placement_group_gpus, "actor_gpus": pl.actor_gpus,
            "rollout_gpus": pl.rollout_gpus, "gpus_per_node": hw.gpus_per_node,
            "gpu_nodes": math.ceil(pl.placement_group_gpus / hw.gpus_per_node),
            "efa_interfaces_per_node": hw.efa_interfaces_per_node, "tp": recipe.parallel.tp,
            "pp": recipe.parallel.pp, "cp": recipe.parallel.cp, "ep": recipe.parallel.ep,
            "data_parallel": recipe.data_parallel}


def document(recipe_id: str, hardware: str, image: str = manifests.DEFAULT_IMAGE) -> dict[str, Any]:
    """Everything a launch needs, secrets by name only. KeyError / NotForHardware say what is wrong."""
    hw = get_profile(hardware)
    recipe = recipes.get(recipe_id, hw)
    return {
        "recipe": recipe.id, "hardware": hw.name, "argv": recipe.argv(),
        "entrypoint": launch.entrypoint(recipe.argv()), "runtime_env": recipe.runtime_env(),
        "secret_env": {name: f"<from the workers' environment: Kubernetes secret {manifests.SECRET_NAME}, "
                             f"key {name.lower()}; never rendered>" for name in recipe.secret_env},
        "resources": resources(recipe, hw.name),
        "manifests": {"rayjob": manifests.ray_job(recipe, hw, image),
                      "raycluster": manifests.ray_cluster(recipe, hw, image)},
    }


def as_shell(doc: dict[str, Any]) -> str:
    """A launcher script: run it with `ray job submit -- ./launch.sh` (argv after --, nothing to expand)."""
    env = doc["runtime_env"]["env_vars"]
    lines = ["#!/usr/bin/env bash", f"# rlcheck render {doc['recipe']} --hardware {doc['hardware']} --format shell",
             f"# secrets come from the environment, never this file: {', '.join(doc['secret_env']) or 'none'}",
             "set -euo pipefail"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    lines.append(f"exec {doc['entrypoint']} \"$@\"")
    return "\n".join(lines) + "\n"


def dump(doc: dict[str, Any], fmt: str) -> str:
    if fmt == "shell":
        return as_shell(doc)
    if fmt == "yaml":
        return yaml_text.dump(doc)  # YamlMissing (one line: what to install) without PyYAML
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    raise ValueError(f"format={fmt!r}: one of {', '.join(FORMATS)}")
