"""LD_PRELOAD in the job's runtime env against torch_memory_saver's preload (catalogue: tms-invalid-ld-preload).

With offload on, SLIME sets LD_PRELOAD to torch_memory_saver's hook in the env of the train actors it creates
(slime/ray/actor_group.py, replacing the job's value for them), and SGLang's memory saver prepends the hook to
the LD_PRELOAD it inherits for its scheduler processes (torch_memory_saver configure_subprocess). The hook asserts
exactly one torch_memory_saver entry in LD_PRELOAD: a hook already in the job env makes two in every engine that
offloads (--offload-rollout), and releases without torch_memory_saver#64 (0.0.9 and older) load the whole
colon-separated value as one path, so any other preloaded library breaks them. Every other process of the job
(the driver, a custom actor) sees the job's value as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rlcheck import catalog
from rlcheck.framework.argv import option
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "tms-invalid-ld-preload"


def offload_roles(argv: Sequence[str]) -> list[str]:
    """The roles SLIME runs under torch_memory_saver, as slime_validate_args settles --offload* and --colocate."""
    def flag(name: str) -> bool | None:
        seen = [t for t in argv if t in (f"--{name}", f"--no-{name}")]
        return None if not seen else seen[-1] == f"--{name}"

    if "--debug-rollout-only" in argv:
        return []
    train, rollout = flag("offload-train"), flag("offload-rollout")
    if "--offload" in argv:
        train = rollout = True
    if "--colocate" in argv:
        train = False if "--release-train" in argv else (True if train is None else train)
        rollout = True if rollout is None or "--release-train" in argv else rollout
    critic = option(argv, "--advantage-estimator") == "ppo"  # the value argparse keeps, in either spelling
    return [role for role, on in (("train", bool(train) or critic), ("rollout", bool(rollout))) if on]


def evaluate_ld_preload_env(env: Mapping[str, str], argv: Sequence[str], name: str) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    value = (env.get("LD_PRELOAD") or "").strip()
    roles = offload_roles(argv)
    if not value:
        return Verdict(**base, status=Status.PASS, summary=f"{name}: no LD_PRELOAD in the job's runtime env")
    if not roles:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"{name}: LD_PRELOAD is set but offload is off: torch_memory_saver is not preloaded")
    entries = [e for e in value.split(":") if e]
    hooks = [e for e in entries if "torch_memory_saver" in e]
    remedy = catalog.get(FAILURE_ID).remedy
    offload = f"offload on ({' and '.join(roles)})"
    if hooks and "rollout" in roles:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{name}: the job's runtime env preloads {', '.join(hooks)} with {offload}: SGLang's "
                               "memory saver prepends its own hook, so the engines see two torch_memory_saver "
                               "entries and torch_memory_saver asserts invalid LD_PRELOAD")
    if hooks:
        return Verdict(**base, status=Status.WARN, remedy=remedy,
                       summary=f"{name}: the job's runtime env preloads {', '.join(hooks)} with {offload}: SLIME "
                               "replaces it in its train actors, every other process of the job loads that build")
    return Verdict(**base, status=Status.WARN, remedy=remedy,
                   summary=f"{name}: the job's runtime env preloads {', '.join(entries)} with {offload}: "
                           "torch_memory_saver before #64 (0.0.9 and older) asserts invalid LD_PRELOAD beside "
                           "another library, and SLIME's train actors lose it (their LD_PRELOAD is the hook alone)")
