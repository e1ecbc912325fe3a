"""A proxy in the job's runtime env (rollout-engines-unreachable): every branch, upper and lower case, CIDR
entries, an empty value, and the recipe path through the registry's judge."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe.proxy_env import evaluate_proxy_env, split_no_proxy
from rlcheck.recipes.recipe import with_env
from rlcheck.verdict import Status

PROXY = "http://127.0.0.1:3128"


@pytest.mark.parametrize(("env", "status", "phrase"), [
    ({}, Status.PASS, "no http(s)/all proxy"),
    ({"https_proxy": ""}, Status.PASS, "no http(s)/all proxy"),
    ({"HTTP_PROXY": PROXY}, Status.FAIL, "http_proxy set in the runtime env and no_proxy exempts no host"),
    ({"https_proxy": PROXY, "no_proxy": "10.0.0.0/8,192.168.0.0/16"}, Status.FAIL,
     "CIDR entries httpx ignores: 10.0.0.0/8, 192.168.0.0/16"),
    ({"all_proxy": PROXY, "NO_PROXY": " , "}, Status.FAIL, "exempts no host"),
    ({"https_proxy": PROXY, "no_proxy": "*"}, Status.PASS, "no_proxy='*'"),
    ({"https_proxy": PROXY, "NO_PROXY": "localhost,10.0.0.5"}, Status.WARN, "exempts localhost, 10.0.0.5"),
    ({"https_proxy": PROXY, "no_proxy": "10.0.0.5,10.0.0.0/8"}, Status.WARN, "CIDR entries httpx ignores: 10.0.0.0/8"),
])
def test_evaluate_proxy_env_every_branch(env, status, phrase):
    verdict = evaluate_proxy_env(env, "r")
    assert verdict.status is status and phrase in verdict.summary, verdict.summary
    assert verdict.failure_id == "rollout-engines-unreachable"
    assert bool(verdict.remedy) is (status is not Status.PASS)


def test_lower_case_wins_over_upper_case():
    env = {"no_proxy": "10.0.0.0/8", "NO_PROXY": "*", "https_proxy": PROXY}
    assert evaluate_proxy_env(env, "r").status is Status.FAIL


def test_split_no_proxy_separates_cidr_entries():
    assert split_no_proxy(" a.example , 10.1.0.0/16,,10.0.0.5 ") == (["a.example", "10.0.0.5"], ["10.1.0.0/16"])


def test_shipped_recipe_with_a_proxy_added_fails_and_as_shipped_passes():
    h200 = get_profile("h200")
    shipped = recipes.get("qwen3-30b-a3b-disaggregated", h200)
    proxied = with_env(shipped, {"https_proxy": PROXY, "no_proxy": "10.0.0.0/8"})
    assert evaluate_proxy_env(shipped.env_dict(), shipped.id).status is Status.PASS
    assert evaluate_proxy_env(proxied.env_dict(), proxied.id).status is Status.FAIL
