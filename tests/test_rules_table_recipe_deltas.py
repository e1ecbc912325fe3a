"""Rule table for the hardware deltas (rlcheck.recipes.deltas): each delta on both sides of its rule (nodes wider than
the hardware's, sm below 100 with TP or CP above 1, EFA present, a GLM-5.2 recipe off GB300 or with Megatron DeepEP,
the 30B MoE below 100 GiB of HBM), and every shipped recipe on every shipped profile as the checks receive it."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.fixes.driver_guard import ENV_NAME
from rlcheck.hardware import get_profile, load_profiles
from rlcheck.recipes import deltas
from rlcheck.recipes.deltas import NotForHardware
from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.recipe import Placement

H100, H200, B300, GB300 = (get_profile(n) for n in ("h100", "h200", "b300", "gb300"))
QWEN4B = recipes.get("qwen3-4b-colocated")
QWEN30B = recipes.get("qwen3-30b-a3b-disaggregated")


def _placed(nodes: int, per_node: int, **kw) -> object:
    return QWEN4B.replace(placement=Placement(actor_num_nodes=nodes, actor_gpus_per_node=per_node, colocate=True,
                                              rollout_gpus_per_engine=2, num_gpus_per_node=per_node, **kw))


@pytest.mark.parametrize(("nodes", "per_node", "hw", "shaped"), [
    (2, 8, GB300, (4, 4, 4)),  # 8 per node on 4-GPU nodes: the same 16 GPUs on 4 nodes
    (1, 8, GB300, (2, 4, 4)),
    (2, 4, GB300, (2, 4, 4)),  # already fits: kept, nodes of the hardware's width
    (2, 4, H200, (2, 4, 8)),
    (2, 8, H200, (2, 8, 8)),
    (1, 3, H200, (1, 3, 8)),
])
def test_node_shape_lays_training_gpus_on_the_hardwares_nodes(nodes, per_node, hw, shaped):
    placed = deltas.node_shape(_placed(nodes, per_node), hw).placement
    assert (placed.actor_num_nodes, placed.actor_gpus_per_node, placed.num_gpus_per_node) == shaped
    # whole numbers, as train.py's argv renders them (--actor-num-nodes 4, never 4.0)
    assert [str(n) for n in (placed.actor_num_nodes, placed.actor_gpus_per_node)] == [str(n) for n in shaped[:2]]
    assert (placed.colocate, placed.rollout_gpus_per_engine, placed.rollout_num_gpus) == (True, 2, None)


def test_node_shape_keeps_a_disaggregated_recipes_rollout_gpus():
    placed = deltas.node_shape(QWEN30B, GB300).placement
    assert placed == Placement(actor_num_nodes=3, actor_gpus_per_node=4, colocate=False, rollout_num_gpus=4,
                               rollout_gpus_per_engine=2, num_gpus_per_node=4)


@pytest.mark.parametrize(("nodes", "per_node", "gpus"), [(1, 6, 6), (3, 6, 18)])
def test_node_shape_refuses_gpus_that_do_not_fill_whole_nodes(nodes, per_node, gpus):
    with pytest.raises(NotForHardware) as err:
        deltas.node_shape(_placed(nodes, per_node), GB300)
    assert str(err.value) == (f"qwen3-4b-colocated: {gpus} training GPUs do not fill whole gb300 nodes of 4 GPUs")


@pytest.mark.parametrize(("tp", "cp", "hw", "set_"), [
    (2, 1, H200, True), (1, 2, H200, True), (1, 1, H200, False), (2, 2, H100, True),
    (2, 1, B300, False), (1, 2, GB300, False),
    (2, 1, dataclasses.replace(H200, compute_capability="9.9"), True),  # sm 99: below 100
    (2, 1, dataclasses.replace(H200, compute_capability="10.0"), False),
])
def test_hopper_connections_below_sm_100_with_tp_or_cp_above_1(tp, cp, hw, set_):
    recipe = QWEN4B.replace(parallel=dataclasses.replace(QWEN4B.parallel, tp=tp, cp=cp))
    env = deltas.hopper_connections(recipe, hw).env_dict()
    assert env == {**QWEN4B.env_dict(), **({"CUDA_DEVICE_MAX_CONNECTIONS": "1"} if set_ else {})}


@pytest.mark.parametrize(("hw", "capability"), [(H200, "9.0"), (GB300, "10.3"), (get_profile("b200"), "10.0")])
def test_worker_capability_answers_the_gpu_probes_with_the_profiles(hw, capability):
    assert deltas.worker_capability(QWEN4B, hw).env_dict() == {**QWEN4B.env_dict(), ENV_NAME: capability}


@pytest.mark.parametrize(("efa", "added"), [(16, True), (1, True), (0, False)])
def test_efa_env_only_where_the_hardware_has_efa(efa, added):
    env = deltas.efa_env(QWEN4B, dataclasses.replace(H200, efa_interfaces_per_node=efa)).env_dict()
    assert env == {**QWEN4B.env_dict(), **({"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"} if added else {})}


@pytest.mark.parametrize("hw", ["h100", "h200", "b200", "b300", "gb200"])
def test_a_glm_recipe_off_gb300_is_refused_saying_what_it_is_shaped_for(hw):
    profile = get_profile(hw)
    with pytest.raises(NotForHardware) as err:
        deltas.gb300_only(recipes.get("glm5.2-gb300"), profile)
    assert str(err.value) == (f"glm5.2-gb300: shaped for GB300 nodes (4 GPUs per node, NVL72, 16 nodes); {hw} nodes "
                              f"have {profile.gpus_per_node} GPUs")


def test_a_glm_recipe_with_megatron_deepep_is_refused_on_gb300():
    deepep = glm_recipe(GlmOptions(megatron_use_deepep=True))
    with pytest.raises(ValueError) as err:
        deltas.gb300_only(deepep, GB300)
    assert type(err.value) is ValueError and str(err.value) == (
        "megatron_use_deepep=True: Megatron DeepEP is not supported on GB300; set it False (--no-megatron-use-deepep)")


def test_gb300_only_passes_a_glm_recipe_on_gb300_and_every_other_recipe_anywhere():
    glm = recipes.get("glm5.2-gb300")
    assert deltas.gb300_only(glm, GB300) is glm
    assert deltas.gb300_only(QWEN4B, H200) is QWEN4B
    renamed = glm.replace(id="my-glm5.2")  # only ids starting glm5.2 are the GB300 recipe
    assert deltas.gb300_only(renamed, H200) is renamed


@pytest.mark.parametrize(("recipe_id", "hbm_gib", "moved"), [
    ("qwen3-30b-a3b-disaggregated", 74.5, True),
    ("qwen3-30b-a3b-disaggregated", 99.9, True),
    ("qwen3-30b-a3b-disaggregated", 100.0, False),
    ("qwen3-30b-a3b-disaggregated", 139.8, False),
    ("qwen3-4b-colocated", 74.5, False),
])
def test_the_30b_moe_below_100_gib_moves_to_ep_4_and_a_cpu_optimizer(recipe_id, hbm_gib, moved):
    recipe = recipes.get(recipe_id)
    out = deltas.moe_on_small_hbm(recipe, dataclasses.replace(H100, hbm_gib=hbm_gib))
    if moved:
        assert out == recipe.replace(parallel=dataclasses.replace(recipe.parallel, ep=4),
                                     optimizer=dataclasses.replace(recipe.optimizer, cpu_offload=True))
    else:
        assert out is recipe


def test_the_deltas_apply_in_order_and_name_the_hardware():
    assert deltas.DELTAS == (deltas.gb300_only, deltas.moe_on_small_hbm, deltas.node_shape,
                             deltas.hopper_connections, deltas.worker_capability, deltas.efa_env)
    assert deltas.SMALL_HBM_GIB == 100.0


# every shipped recipe on every shipped profile: (nodes, GPUs per node, node width, EP, CPU optimizer, env added)
HOPPER_EFA = {ENV_NAME: "9.0", "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}


@pytest.mark.parametrize(("recipe_id", "hw", "shape", "env"), [
    ("qwen3-4b-colocated", "h200", (2, 8, 8, 1, False), HOPPER_EFA),
    ("qwen3-4b-colocated", "gb300", (4, 4, 4, 1, False),
     {ENV_NAME: "10.3", "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}),
    ("qwen3-30b-a3b-disaggregated", "h100", (2, 6, 8, 4, True), {**HOPPER_EFA, "CUDA_DEVICE_MAX_CONNECTIONS": "1"}),
    ("qwen3-30b-a3b-disaggregated", "h200", (2, 6, 8, 2, False), {**HOPPER_EFA, "CUDA_DEVICE_MAX_CONNECTIONS": "1"}),
    ("qwen3-30b-a3b-disaggregated", "b200", (2, 6, 8, 2, False),
     {ENV_NAME: "10.0", "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}),
    ("glm5.2-gb300", "gb300", (16, 4, 4, 16, False),
     {ENV_NAME: "10.3", "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}),
])
def test_each_recipe_on_each_hardware_as_the_checks_receive_it(recipe_id, hw, shape, env):
    base, profile = recipes.get(recipe_id), get_profile(hw)
    got = recipes.get(recipe_id, hw)
    assert got == deltas.for_hardware(base, profile) and got.hardware == hw
    pl = got.placement
    assert (pl.actor_num_nodes, pl.actor_gpus_per_node, pl.num_gpus_per_node, got.parallel.ep,
            got.optimizer.cpu_offload) == shape
    assert got.env_dict() == {**base.env_dict(), **env}


@pytest.mark.parametrize("hw", sorted(load_profiles()))
def test_every_shipped_recipe_fits_or_is_refused_on_every_profile(hw):
    fits = {rid for rid in recipes.RECIPE_IDS if _fits(rid, hw)}
    assert fits == ({*recipes.RECIPE_IDS} if hw == "gb300" else {*recipes.RECIPE_IDS} - {"glm5.2-gb300"})


def _fits(recipe_id: str, hw: str) -> bool:
    try:
        recipes.get(recipe_id, hw)
    except NotForHardware:
        return False
    return True
