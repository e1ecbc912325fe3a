"""Session resources the checks and reproducers share: Ray on loopback, or the user's cluster."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from rlcheck import recipes
from rlcheck.cluster import EmbeddedRay, RayEndpoints
from rlcheck.hardware import HardwareProfile
from rlcheck.plugin.options import get_context
from rlcheck.recipes.recipe import Recipe


@pytest.fixture(scope="session")
def local_ray() -> Iterator[RayEndpoints]:
    """An embedded single-machine Ray on 127.0.0.1, whatever --ray-address says.

    Reproducers use it: what they submit reads files of this machine.
    """
    with EmbeddedRay() as endpoints:
        yield endpoints


@pytest.fixture(scope="session")
def ray_cluster(pytestconfig: pytest.Config, request: pytest.FixtureRequest) -> RayEndpoints:
    """The cluster under check: --ray-address when given, else the session's embedded loopback Ray (local_ray)."""
    address = get_context(pytestconfig).ray_address
    if address is None:
        endpoints: RayEndpoints = request.getfixturevalue("local_ray")  # one embedded Ray per session, not two
        return endpoints
    dashboard = address if address.startswith("http") else ""
    return RayEndpoints(gcs_address=address, dashboard_url=dashboard, nodes=0)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RecipeUnderCheck:
    recipe: Recipe
    """The --recipe with --hardware's deltas applied, or the base recipe when they cannot be."""
    profile: HardwareProfile | None
    refusal: str
    """Why the recipe does not fit the hardware ('' when it does)."""


@pytest.fixture(scope="session")
def recipe_under_check(pytestconfig: pytest.Config) -> RecipeUnderCheck:
    """The typed recipe the recipe checks judge: --recipe on --hardware."""
    ctx = get_context(pytestconfig)
    base = recipes.get(ctx.recipe)
    if ctx.profile is None:
        return RecipeUnderCheck(recipe=base, profile=None, refusal="")
    try:
        return RecipeUnderCheck(recipe=recipes.get(ctx.recipe, ctx.profile), profile=ctx.profile, refusal="")
    except ValueError as exc:  # NotForHardware, or a hardware rule such as Megatron DeepEP on GB300
        return RecipeUnderCheck(recipe=base, profile=ctx.profile, refusal=str(exc))
