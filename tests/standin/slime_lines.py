"""SLIME's log lines of a GRPO run, rendered from rlcheck's per-version statement table.

Used by the stand-in trainer (real time, real sleeps) and by `python tests/standin/slime_lines.py`, which
writes the recorded logs under tests/data/logs/slime/<version>/ (simulated time). Lines carry what a real
Ray job log carries: the driver's lines bare, actor lines behind Ray's dim/cyan `(Class pid=N[, ip=X])`
prefix, SLIME's logger format `[date time] file.py:LINE - message` with the version's line numbers, the
metric dicts as SLIME's repr prints them, and the last pipeline stage's lines (another process, another
node) stamped a second behind the rank-0 lines around them, as Ray delivers them.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere, or inside a Ray job's working dir
    sys.path.insert(0, str(ROOT))

from rlcheck.e2e import slime_log  # noqa: E402

PIDS = {"driver": 0, "RolloutManager": 2201, "MegatronTrainRayActor": 3301, "last_stage": 3309}
LAST_STAGE_IP = "10.1.0.6"


@dataclasses.dataclass(kw_only=True, slots=True)
class SlimeLog:
    version: str
    write: Callable[[str], None]
    now: Callable[[], float]
    wait: Callable[[float], None]
    colour: bool = True

    def _prefix(self, actor: str) -> str:
        if actor == "driver":
            return ""
        name, pid = ("MegatronTrainRayActor", PIDS[actor]) if actor == "last_stage" else (actor, PIDS[actor])
        where = f"{name} pid={pid}" + (f", ip={LAST_STAGE_IP}" if actor == "last_stage" else "")
        return f"\x1b[2m\x1b[36m({where})\x1b[0m " if self.colour else f"({where}) "

    def say(self, statement: str, *, actor: str = "", skew_s: float = 0.0, **fields: object) -> None:
        """One SLIME logger line of this version's statement."""
        s = slime_log.tables()[self.version].statements[statement]
        stamp = time.strftime(slime_log.LOGGER_DATEFMT, time.gmtime(self.now() + skew_s))
        self.write(f"{self._prefix(actor or s.actor)}[{stamp}] {Path(s.file).name}:{s.line} - {s.render(**fields)}")

    def raw(self, text: str, actor: str = "driver") -> None:
        self.write(self._prefix(actor) + text)

    def timer(self, name: str, elapsed_s: float | None = None) -> None:
        if elapsed_s is None:
            self.say("timer_start", name=name)
        else:
            self.say("timer_end", name=name, elapsed_time=elapsed_s)

    def startup(self, num_gpus: int, startup_s: float) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.now()))
        self.raw(f"{stamp},123\tINFO worker.py:1843 -- Connecting to existing Ray cluster at address: 10.1.0.5:6379...")
        self.say("placement_create", num_gpus=num_gpus)
        self.wait(1.0)
        for i in range(num_gpus):
            self.say("bundle", i=i, actual_bundle_index=i, node=f"10.1.0.{5 + i // 8}", gpu=i % 8)

    def train_actor_ready(self) -> None:
        self.timer("train_wait")

    def first_sync(self, sync_s: float) -> None:
        self.timer("update_weights")
        self.wait(sync_s)
        self.timer("update_weights", sync_s)


def rollout_perf(*, truncated_ratio: float, zero_groups: int, rollout_s: float) -> str:
    """The RolloutManager's perf dict, keys in the order SLIME builds them (rollout/ then perf/)."""
    d = {"rollout/response_len/mean": 2311.5, "rollout/response_len/median": 2048.0, "rollout/response_len/max": 8192,
         "rollout/response_len/min": 211, f"rollout/zero_std/count_{0.0}": zero_groups,
         "rollout/repetition_frac": 0.0078125, "rollout/truncated_ratio": truncated_ratio,
         "perf/rollout_time": rollout_s, "perf/tokens_per_gpu_per_sec": 1843.7,
         "perf/longest_sample_tokens_per_sec": 64.9, "perf/effective_tokens_per_gpu_per_sec": 1843.7,
         "perf/longest_effective_sample_tokens_per_sec": 64.9}
    return repr(d)


def train_rollout(*, reward: float, truncated: float) -> str:
    # rollout/rewards is the group-normalised reward (GRPO): about 0 whatever the raw reward's sign
    return repr({"rollout/response_lengths": 2311.5, "rollout/rewards": 0.0 if reward == 0 else 0.0213,
                 "rollout/raw_reward": reward, "rollout/truncated": truncated, "rollout/total_lengths": 2467.2,
                 "rollout/log_probs": -0.3125, "rollout/ref_log_probs": -0.3125, "rollout/advantages": 0.0017})


def train_step(step: int, *, kl: float, loss: float, version: str, kl_loss: float | None = None) -> str:
    d: dict[str, object] = {"train/loss": loss, "train/pg_loss": loss, "train/entropy_loss": 0.3121,
                            "train/pg_clipfrac": 0.0, "train/ppo_kl": kl,
                            "train/kl_loss": kl if kl_loss is None else kl_loss,
                            "train/grad_norm": 0.412, "train/lr-pg_0": 1e-06}
    if version != "v0.2.4":
        d["train/global_batch_size"] = 128
    d["train/step"] = step
    return repr(d)


def train_perf(phase_s: float) -> str:
    return repr({"perf/data_preprocess_time": 0.1, "perf/train_wait_time": 2 * phase_s,
                 "perf/ref_log_probs_time": phase_s, "perf/log_probs_time": phase_s, "perf/actor_train_time": phase_s,
                 "perf/train_time": 4 * phase_s, "perf/step_time": 6 * phase_s, "perf/wait_time_ratio": 0.3333})


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LoopShape:
    samples: int
    steps: int = 1
    reward: float = 0.4375
    truncated_ratio: float = 0.0
    kl: float = 0.0
    """train/ppo_kl at each rollout's first step (later steps print 0.0021)."""
    kl_loss: float | None = None
    """train/kl_loss there; None: the same as kl."""
    loss: float = 0.0123
    rollout_s: float = 120.0
    phase_s: float = 30.0


def loop(log: SlimeLog, i: int, shape: LoopShape, before: Callable[[str], None] = lambda _: None) -> None:
    """One GRPO loop as SLIME prints it; before(milestone) runs just before each milestone's line."""
    before("rollout")
    log.wait(shape.rollout_s)
    if "rollout_collected" in slime_log.tables()[log.version].statements:
        log.say("rollout_collected", n=shape.samples)
    zero_groups = shape.samples // 8 if shape.reward == 0 else 3
    log.say("rollout_perf", rollout_id=i, log_dict=rollout_perf(truncated_ratio=shape.truncated_ratio,
                                                               zero_groups=zero_groups, rollout_s=shape.rollout_s))
    log.timer("data_preprocess")
    log.timer("data_preprocess", 0.1)
    log.timer("train_wait", shape.rollout_s)
    log.timer("train")
    for name in ("ref_log_probs", "log_probs"):
        log.timer(name)
        before(name)
        log.wait(shape.phase_s)
        log.timer(name, shape.phase_s)
    log.say("train_metrics", actor="last_stage", skew_s=-1.0, metric_name="rollout", rollout_id=i,
            reduced_log_dict=train_rollout(reward=shape.reward, truncated=shape.truncated_ratio))
    log.timer("actor_train")
    before("actor_train")
    for s in range(shape.steps):
        log.wait(shape.phase_s / shape.steps)
        step = i * shape.steps + s
        kl, kl_loss = (shape.kl, shape.kl_loss) if s == 0 else (0.0021, None)
        log.say("train_step", actor="last_stage", skew_s=-1.0, role_tag="", accumulated_step_id=step,
                log_dict=train_step(step, kl=kl, loss=shape.loss, version=log.version, kl_loss=kl_loss))
    log.timer("actor_train", shape.phase_s)
    before("train")
    log.timer("train", 3 * shape.phase_s + 0.1)
    log.timer("train_wait")
    log.say("train_perf", actor="last_stage", rollout_id=i, log_dict=train_perf(shape.phase_s))
    log.timer("update_weights")
    before("update_weights")
    log.wait(shape.phase_s / 3)
    log.timer("update_weights", shape.phase_s / 3)


RECORDED = {"healthy": LoopShape(samples=128), "truncation-46pct": LoopShape(samples=128, truncated_ratio=0.4609375),
            "reward-zero": LoopShape(samples=128, reward=0.0)}


def record(version: str, shape: LoopShape, loops: int = 3) -> list[str]:
    """A whole job log in this version's format, on a simulated clock (2026-07-01 10:00:00 UTC on)."""
    lines: list[str] = []
    clock = [1782900000.0]

    def wait(s: float) -> None:
        clock[0] += s

    log = SlimeLog(version=version, write=lines.append, now=lambda: clock[0], wait=wait)
    log.raw("Job 'raysubmit_Ab3dE5fG7hJ9kL1m' submitted successfully")
    log.startup(num_gpus=16, startup_s=0)
    wait(240.0)  # engines launch and Megatron init: SGLang at --log-level warning prints nothing here
    log.train_actor_ready()
    wait(60.0)
    log.first_sync(14.2)
    for i in range(loops):
        loop(log, i, shape)
    log.raw("Job 'raysubmit_Ab3dE5fG7hJ9kL1m' succeeded")
    return lines


if __name__ == "__main__":  # rewrite the recorded logs: python tests/standin/slime_lines.py
    for version in slime_log.VERSIONS:
        folder = ROOT / "tests" / "data" / "logs" / "slime" / version
        folder.mkdir(parents=True, exist_ok=True)
        for name, shape in RECORDED.items():
            (folder / f"{name}.log").write_text("\n".join(record(version, shape)) + "\n", encoding="utf-8")
