"""An HTTP proxy in the job's runtime env against what bypasses it (catalogue: rollout-engines-unreachable).

SLIME and the SGLang router talk to engines on node addresses over HTTP with httpx / requests. A proxy variable
in the job env sends that traffic to the proxy unless no_proxy exempts the address; httpx does not read CIDR
ranges in no_proxy (10.0.0.0/8 exempts nothing), so a cluster that relies on one is unreachable to itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from rlcheck import catalog
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "rollout-engines-unreachable"
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")


def _get(env: Mapping[str, str], name: str) -> str:
    """Lower-case wins, as in httpx and requests; an empty value is unset."""
    return (env.get(name) or env.get(name.upper()) or "").strip()


def split_no_proxy(value: str) -> tuple[list[str], list[str]]:
    """(entries a client honours, CIDR entries httpx ignores) of a no_proxy value."""
    entries = [e.strip() for e in value.split(",") if e.strip()]
    return [e for e in entries if "/" not in e], [e for e in entries if "/" in e]


def evaluate_proxy_env(env: Mapping[str, str], recipe_id: str) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    proxies = [n for n in PROXY_VARS if _get(env, n)]
    if not proxies:
        return Verdict(**base, status=Status.PASS,
                       summary=f"{recipe_id}: no http(s)/all proxy in the job's runtime env")
    honoured, cidr = split_no_proxy(_get(env, "no_proxy"))
    if "*" in honoured:
        return Verdict(**base, status=Status.PASS, summary=f"{recipe_id}: {', '.join(proxies)} set; no_proxy='*' "
                                                           "exempts every address")
    ignored = f" (CIDR entries httpx ignores: {', '.join(cidr)})" if cidr else ""
    remedy = catalog.get(FAILURE_ID).remedy
    if not honoured:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{recipe_id}: {', '.join(proxies)} set in the runtime env and no_proxy exempts no "
                               f"host{ignored}: engine and router traffic between nodes goes to the proxy")
    return Verdict(**base, status=Status.WARN, remedy=remedy,
                   summary=f"{recipe_id}: {', '.join(proxies)} set; no_proxy exempts {', '.join(honoured)}{ignored} "
                           "and rlcheck cannot tell from the recipe that these cover every node address")
