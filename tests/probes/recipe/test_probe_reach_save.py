"""Node addresses other nodes must reach, and the checkpoint save with training offloaded: every branch."""

from __future__ import annotations

import pytest

from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.framework.detect import Installed
from rlcheck.probes.cluster.node_addresses import evaluate_node_addresses, parse
from rlcheck.probes.recipe import checkpoint_save as save
from rlcheck.verdict import Status


def node(address: str, hostname: str, *, head: bool = False) -> NodeAnswer:
    facts = NodeFacts(node_id=f"{hostname}-{address}", address=address, hostname=hostname, is_head=head, ray_gpus=8.0)
    return NodeAnswer(node=facts, outcome=Outcome.ANSWERED, elapsed_s=1.0, detail="recorded")


def cluster(*nodes: NodeAnswer) -> FanoutResult:
    return FanoutResult(address="10.0.0.1:6379", connected=True, tried="ray.init", nodes=nodes)


@pytest.mark.parametrize(("nodes", "status", "fragment"), [
    ((node("10.0.0.1", "a", head=True), node("10.0.0.2", "b")), Status.PASS, "2 node address(es)"),
    ((node("127.0.0.1", "a", head=True),), Status.PASS, "one node"),
    # a local multi-node Ray: every node on loopback of the same host
    ((node("127.0.0.1", "a", head=True), node("127.0.0.1", "a")), Status.PASS, "2 node address(es)"),
    ((node("127.0.0.1", "a", head=True), node("10.0.0.2", "b")), Status.FAIL, "127.0.0.1 reaches only its own host"),
    ((node("0.0.0.0", "a", head=True), node("10.0.0.2", "b")), Status.FAIL, "0.0.0.0 reaches only"),
    ((node("172.17.0.2", "a", head=True), node("172.17.0.2", "b")), Status.FAIL, "claimed by 2 nodes (a, b)"),
    ((node("10.0.0.1", "a", head=True), node("fd00::2", "b")), Status.FAIL, "mix IPv4 and IPv6"),
    ((node("10.0.0.1", "a", head=True), node("169.254.3.4", "b")), Status.WARN, "link-local"),
    ((node("10.0.0.1", "a", head=True), node("172.17.0.3", "b")), Status.WARN, "Docker's default bridge"),
    ((node("10.0.0.1", "a", head=True), node("gpu-b.cluster", "b")), Status.WARN, "host name"),
    ((node("172.17.0.2", "a", head=True),), Status.PASS, "one node"),
    ((), Status.UNKNOWN, "no alive node"),
])
def test_node_addresses_every_branch(nodes, status, fragment):
    verdict = evaluate_node_addresses(cluster(*nodes))
    assert verdict.status is status, verdict.summary
    assert fragment in verdict.summary
    assert verdict.failure_id == "rollout-engines-unreachable"
    assert (verdict.remedy != "") == (status in (Status.WARN, Status.FAIL))


def test_node_addresses_unreached_ray_is_unknown_naming_what_was_tried():
    result = FanoutResult(address="ray://10.0.0.1:10001", connected=False, tried="ray.init with a 30 s deadline",
                          error="timed out")
    verdict = evaluate_node_addresses(result)
    assert verdict.status is Status.UNKNOWN and "not reached: timed out" in verdict.summary


@pytest.mark.parametrize(("text", "ip"), [("10.0.0.1", "10.0.0.1"), ("10.0.0.1:6379", "10.0.0.1"),
                                          ("[::1]:6379", "::1"), ("fe80::1%eth0", "fe80::1"), ("gpu-a", None)])
def test_node_address_parse(text, ip):
    found = parse(text)
    assert (str(found) if found else None) == ip


BEFORE_1856 = """
class MegatronTrainRayActor:
    def train(self, rollout_id):
        self.wake_up()
    def save_model(self, rollout_id):
        reload_process_groups()
"""
AFTER_1856 = BEFORE_1856.replace("        self.wake_up()\n", "        self.wake_up()\n        self.sleep()\n")
AFTER_1888 = AFTER_1856.replace("        reload_process_groups()", "        self.wake_up()\n        self.sleep()")
SAVING = ["--colocate", "--save", "/ckpt", "--save-interval", "20"]


def _obs(source: str | None, framework: Installed | None = None) -> save.SaveObservation:
    paused = save.saves_paused_model(source) if source else None
    return save.SaveObservation(source="site-packages/slime/backends/megatron_utils/actor.py" if source else None,
                                paused_save=paused, framework=framework or Installed(framework=None))


@pytest.mark.parametrize(("source", "argv", "framework", "status", "fragment"), [
    (AFTER_1856, SAVING, None, Status.FAIL, "never wakes it"),
    (AFTER_1888, SAVING, None, Status.PASS, "wakes the model"),
    (BEFORE_1856, SAVING, None, Status.PASS, "wakes the model for the save (or does not pause it)"),
    (AFTER_1856, ["--colocate", "--save", "/ckpt"], None, Status.SKIP, "no --save with --save-interval"),
    (AFTER_1856, [*SAVING, "--no-offload-train"], None, Status.PASS, "not offloaded"),
    (AFTER_1856, [*SAVING, "--release-train"], None, Status.PASS, "--release-train"),
    (AFTER_1856, ["--offload", "--save", "/c", "--save-interval", "5"], None, Status.FAIL, "(--offload)"),
    # the critic forces offload_train only since THUDM/slime#1882, after the fix: a paused save never meets it
    (AFTER_1856, ["--advantage-estimator", "ppo", "--save", "/c", "--save-interval", "5"], None, Status.PASS,
     "not offloaded (no offload flag)"),
    (AFTER_1856, ["--save", "/c", "--save-interval", "5"], None, Status.PASS, "no offload flag"),
    ("def unrelated(): pass\n", SAVING, None, Status.UNKNOWN, "has no train actor"),
    (None, SAVING, Installed(framework="slime", version="0.2.4"), Status.WARN, "THUDM/slime#1893"),
    (None, SAVING, Installed(framework="slime", version="0.3.1"), Status.PASS, "landed in v0.3.0"),
    (None, SAVING, Installed(framework="slime", version="0.2.3"), Status.PASS, "SLIME 0.2.3"),
    (None, SAVING, Installed(framework="slime", main=True), Status.SKIP, "slime main"),
    (None, SAVING, Installed(framework=None), Status.SKIP, "no framework"),
    (None, SAVING, Installed(framework="slime", version="next"), Status.UNKNOWN, "not a version"),
])
def test_checkpoint_save_every_branch(source, argv, framework, status, fragment):
    verdict = save.evaluate_checkpoint_save(_obs(source, framework), argv, "job")
    assert verdict.status is status, verdict.summary
    assert fragment in verdict.summary
    assert verdict.failure_id == "checkpoint-save-failed"
    assert (verdict.remedy != "") == (status in (Status.WARN, Status.FAIL))


@pytest.mark.parametrize(("argv", "offloaded"), [
    (["--colocate"], True), (["--colocate", "--no-offload-train"], False),
    (["--colocate", "--no-offload-train", "--offload-train"], True), (["--offload-train"], True),
    (["--offload-train", "--no-offload-train"], False), (["--offload", "--debug-rollout-only"], False),
    (["--colocate", "--debug-rollout-only"], False), ([], False),
])
def test_offload_train_as_slime_validates_it(argv, offloaded):
    assert save.offloads_training(argv)[0] is offloaded
