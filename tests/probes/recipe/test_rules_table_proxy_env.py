"""An HTTP proxy in the job's runtime env against what bypasses it as a rule table
(rlcheck/probes/recipe/proxy_env.py): each proxy variable in both cases, empty values, no_proxy's '*', host and
CIDR entries (which httpx ignores), with whole summaries."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.recipe.proxy_env import FAILURE_ID, evaluate_proxy_env, split_no_proxy
from rlcheck.verdict import Status

REMEDY = catalog.get(FAILURE_ID).remedy
NO_HOST = ": engine and router traffic between nodes goes to the proxy"
UNSURE = " and rlcheck cannot tell from the recipe that these cover every node address"


@pytest.mark.parametrize(("env", "status", "summary"), [
    ({}, Status.PASS, "r: no http(s)/all proxy in the job's runtime env"),
    ({"http_proxy": "", "HTTPS_PROXY": "  "}, Status.PASS, "r: no http(s)/all proxy in the job's runtime env"),
    ({"no_proxy": "*"}, Status.PASS, "r: no http(s)/all proxy in the job's runtime env"),
    ({"http_proxy": "http://p:3128"}, Status.FAIL, f"r: http_proxy set in the runtime env and no_proxy exempts no "
                                                   f"host{NO_HOST}"),
    ({"HTTP_PROXY": "http://p:3128", "https_proxy": "http://p:3128", "ALL_PROXY": "socks5://p"}, Status.FAIL,
     f"r: http_proxy, https_proxy, all_proxy set in the runtime env and no_proxy exempts no host{NO_HOST}"),
    ({"http_proxy": "", "HTTP_PROXY": "http://p"}, Status.FAIL,  # an empty lower-case value falls to the upper
     f"r: http_proxy set in the runtime env and no_proxy exempts no host{NO_HOST}"),
    ({"https_proxy": "http://p", "no_proxy": "10.0.0.0/8, 192.168.0.0/16"}, Status.FAIL,
     "r: https_proxy set in the runtime env and no_proxy exempts no host (CIDR entries httpx ignores: 10.0.0.0/8, "
     f"192.168.0.0/16){NO_HOST}"),
    ({"https_proxy": "http://p", "no_proxy": " , "}, Status.FAIL,
     f"r: https_proxy set in the runtime env and no_proxy exempts no host{NO_HOST}"),
    ({"http_proxy": "http://p", "all_proxy": "http://p", "no_proxy": "*"}, Status.PASS,
     "r: http_proxy, all_proxy set; no_proxy='*' exempts every address"),
    ({"http_proxy": "http://p", "NO_PROXY": "localhost, *"}, Status.PASS,
     "r: http_proxy set; no_proxy='*' exempts every address"),
    ({"http_proxy": "http://p", "https_proxy": "http://p", "no_proxy": "localhost,.cluster.local"}, Status.WARN,
     f"r: http_proxy, https_proxy set; no_proxy exempts localhost, .cluster.local{UNSURE}"),
    ({"http_proxy": "http://p", "no_proxy": "localhost, 10.0.0.0/8"}, Status.WARN,
     f"r: http_proxy set; no_proxy exempts localhost (CIDR entries httpx ignores: 10.0.0.0/8){UNSURE}"),
])
def test_rules_table_proxy_env(env, status, summary):
    verdict = evaluate_proxy_env(env, "r")
    assert (verdict.status, verdict.summary) == (status, summary)
    assert verdict.failure_id == FAILURE_ID
    assert verdict.remedy == ("" if status is Status.PASS else REMEDY)


@pytest.mark.parametrize(("value", "split"), [
    ("", ([], [])), ("a, b ,,c", (["a", "b", "c"], [])), ("10.0.0.0/8,x", (["x"], ["10.0.0.0/8"])),
    (" *", (["*"], [])),
])
def test_rules_table_proxy_env_no_proxy_split(value, split):
    assert split_no_proxy(value) == split
