"""Registry rows for the pre-launch checks of unreachable node addresses, the offloaded checkpoint save and the
architecture the engine or converter does not know."""

from __future__ import annotations

from pathlib import Path

from rlcheck import recipes
from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.framework.detect import Installed
from rlcheck.hardware import get_profile
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.recipe import model_registry
from rlcheck.probes.recipe.architecture import ArchitectureObservation
from rlcheck.probes.recipe.checkpoint_save import SaveObservation, saves_paused_model
from rlcheck.probes.recipe.hf_config import collect_hf_config
from rlcheck.verdict import Status

_H200 = get_profile("h200")
_INPUTS = Inputs(recipe=recipes.get("qwen3-4b-colocated", _H200), profile=_H200)
_CONFIGS = Path(__file__).parent / "data" / "hf_config"
_ACTOR = "site-packages/slime/backends/megatron_utils/actor.py"
# the shape of MegatronTrainRayActor between THUDM/slime 75af5297c (#1856) and 16924b697 (#1888), and after it
_PAUSED_SAVE = ("class MegatronTrainRayActor:\n    def train(self, rollout_id):\n        self.sleep()\n"
                "    def save_model(self, rollout_id):\n        reload_process_groups()\n")
_WOKEN_SAVE = _PAUSED_SAVE.replace("reload_process_groups()", "self.wake_up()")


def _cluster(*addresses: tuple[str, str]) -> FanoutResult:
    nodes = tuple(NodeAnswer(node=NodeFacts(node_id=host, address=ip, hostname=host, is_head=i == 0, ray_gpus=8.0),
                             outcome=Outcome.ANSWERED, elapsed_s=1.0, detail="recorded")
                  for i, (ip, host) in enumerate(addresses))
    return FanoutResult(address=f"{addresses[0][0]}:6379", connected=True, tried="ray.init", nodes=nodes)


def _save(source: str) -> SaveObservation:
    return SaveObservation(source=_ACTOR, paused_save=saves_paused_model(source), framework=Installed(framework=None))


def _arch(name: str) -> ArchitectureObservation:
    return ArchitectureObservation(hf=collect_hf_config(["--hf-checkpoint", str(_CONFIGS / name)]),
                                   lists=model_registry.load())


CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "cluster_node_addresses": [
        ("two-hosts-on-the-cluster-network", _INPUTS, _cluster(("10.0.0.1", "gpu-a"), ("10.0.0.2", "gpu-b")),
         Status.PASS),
        ("head-advertises-loopback", _INPUTS, _cluster(("127.0.0.1", "gpu-a"), ("10.0.0.2", "gpu-b")), Status.FAIL),
        ("docker-bridge-address-on-every-host", _INPUTS,
         _cluster(("172.17.0.2", "gpu-a"), ("172.17.0.2", "gpu-b")), Status.FAIL),
        ("worker-link-local", _INPUTS, _cluster(("10.0.0.1", "gpu-a"), ("169.254.0.7", "gpu-b")), Status.WARN),
    ],
    "recipe_checkpoint_save": [
        # the shipped recipe: --colocate (training offloaded), --save, --save-interval 20
        ("save-wakes-the-offloaded-model", _INPUTS, _save(_WOKEN_SAVE), Status.PASS),
        ("slime-1856-without-1888", _INPUTS, _save(_PAUSED_SAVE), Status.FAIL),
        ("slime-0.2.4-release-no-source", _INPUTS,
         SaveObservation(source=None, framework=Installed(framework="slime", version="0.2.4")), Status.WARN),
    ],
    "recipe_architecture_known": [
        ("qwen3-4b", _INPUTS, _arch("qwen3-4b"), Status.PASS),
        ("gemma3-no-slime-converter", _INPUTS, _arch("gemma3-1b"), Status.FAIL),
        ("qwen3-head-not-native-in-sglang", _INPUTS, _arch("qwen3-token-classification"), Status.WARN),
        ("checkpoint-not-mounted-here", _INPUTS, _arch("absent"), Status.SKIP),
    ],
}
