"""Registry rows for the checks of the field catalogue (issue: failures SLIME and Miles users hit)."""

from __future__ import annotations

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.torch_pg import PgObservation
from rlcheck.recipes.recipe import with_env
from rlcheck.verdict import Status

_H200 = get_profile("h200")
_INPUTS = Inputs(recipe=recipes.get("qwen3-4b-colocated", _H200), profile=_H200)
_SLIME = "site-packages/slime/utils/distributed_utils.py"


def _proxied(no_proxy: str) -> Inputs:
    recipe = with_env(_INPUTS.recipe, {"https_proxy": "http://127.0.0.1:3128", "no_proxy": no_proxy})
    return Inputs(recipe=recipe, profile=_H200)


CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "image_torch_pg_options": [
        ("semantic-compare-torch-2.10", _INPUTS, PgObservation(source=_SLIME, string_compare=False, torch="2.10.0"),
         Status.PASS),
        ("string-compare-torch-2.10", _INPUTS, PgObservation(source=_SLIME, string_compare=True, torch="2.10.0"),
         Status.FAIL),
        ("string-compare-torch-2.9.1", _INPUTS, PgObservation(source=_SLIME, string_compare=True, torch="2.9.1"),
         Status.WARN),
    ],
    "recipe_proxy_env": [
        ("no-proxy-in-env", _INPUTS, None, Status.PASS),
        ("proxy-with-cidr-no-proxy", _proxied("10.0.0.0/8"), None, Status.FAIL),
        ("proxy-with-host-no-proxy", _proxied("localhost,127.0.0.1"), None, Status.WARN),
    ],
}
