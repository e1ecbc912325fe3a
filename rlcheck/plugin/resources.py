"""Session resources the checks and reproducers share: Ray on loopback, or the user's cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlcheck.cluster import EmbeddedRay, RayEndpoints
from rlcheck.plugin.options import get_context


@pytest.fixture(scope="session")
def local_ray() -> Iterator[RayEndpoints]:
    """An embedded single-machine Ray on 127.0.0.1, whatever --ray-address says.

    Reproducers use it: what they submit reads files of this machine.
    """
    with EmbeddedRay() as endpoints:
        yield endpoints


@pytest.fixture(scope="session")
def ray_cluster(pytestconfig: pytest.Config) -> Iterator[RayEndpoints]:
    """The cluster under check: --ray-address when given, else an embedded loopback Ray."""
    address = get_context(pytestconfig).ray_address
    if address is None:
        with EmbeddedRay() as endpoints:
            yield endpoints
        return
    dashboard = address if address.startswith("http") else ""
    yield RayEndpoints(gcs_address=address, dashboard_url=dashboard, nodes=0)
