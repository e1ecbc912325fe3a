"""The field corpus: log lines SLIME, Miles and SGLang users posted, each with its source, replayed through the
scanner. A failure line must name its catalogue id (and no id that would send the user the wrong way); a
healthy or look-alike line must name none.
"""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.probes.memory import evaluate_stage_memory
from rlcheck.scan import Matcher
from rlcheck.verdict import Status
from tests.test_probe_memory import _hw, _qwen3_4b, _shipped

ENTRIES = catalog.load_catalog()
MATCHER = Matcher(ENTRIES)

# (source, line, expected id); each line as the user posted it (a trailing part cut where the post was cut).
FAILURES = [
    ("radixark/miles#2138", "ModuleNotFoundError: No module named 'mbridge.core'", "mbridge-missing"),
    ("radixark/miles#2138 (with the import line above it)", "    from mbridge.core import LLMBridge, register_model\n"
     "ModuleNotFoundError: No module named 'mbridge.core'", "mbridge-missing"),
    ("THUDM/slime#1818", "RuntimeError: world_size (8) is not divisible by "
     "expert_tensor_model_pipeline_parallel size (16)", "parallel-layout-mismatch"),
    ("NVIDIA-NeMo/Speech#14838", "RuntimeError: decoder world_size (4) is not divisible by "
     "expert_tensor_model_pipeline_parallel size (8)", "parallel-layout-mismatch"),
    ("THUDM/slime#1951", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 58.15 GiB. GPU 0 has a total "
     "capacity of 139.81 GiB of which 47.69 GiB is free. Process 22249 has 3.24 GiB memory in use.", "cuda-oom"),
    ("radixark/miles#1571", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
     "capacity of 79.10 GiB of which 1.06 GiB is free.", "cuda-oom"),
    ("THUDM/slime#1297", "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
     "cuda-illegal-memory-access"),
    ("sgl-project/sglang#26032", "(SGLangEngine pid=1493437) [2026-05-21 16:07:41 DP6 TP6] Failed to update parameter "
     "online: start out of range", "weight-update-failed"),
    ("sgl-project/sglang#8096", "ValueError: The input (85050 tokens) is longer than the model's context length "
     "(32768 tokens).", "context-length-exceeded"),
    ("sgl-project/sglang#4048", "[2025-03-03 06:49:28 TP5] Input length (160062 tokens) exceeds the maximum allowed "
     "length (59862 tokens). Use a shorter input or enable --allow-auto-truncate.", "context-length-exceeded"),
    ("fzyzcjy/torch_memory_saver#33", "AssertionError: TorchMemorySaver observes invalid LD_PRELOAD. You can use "
     "configure_subprocess() utility", "tms-invalid-ld-preload"),
    ("awslabs/awsome-distributed-ai#1164", "AssertionError: Using tensor model parallelism or context parallelism "
     "require setting the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1", "cuda-device-max-connections"),
    ("NVIDIA/Megatron-LM core_v0.8.0 megatron/training/arguments.py", "RuntimeError: Using sequence parallelism "
     "requires setting the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1", "cuda-device-max-connections"),
    ("awslabs/awsome-distributed-ai#1164 (seed report)", "KeyError: 'warn'", "uvicorn-log-level"),
    ("seed report, flag of THUDM/slime#1344", "train.py: error: unrecognized arguments: --sglang-enable-ep-moe",
     "sglang-dead-flag"),
    ("THUDM/slime#1328", '(RolloutManager pid=1191) For more information check: '
     'https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503, retrying... (attempt 51/60, '
     'url=http://11.215.121.109:3592/generate, response={"error":{"type":"Service Unavailable",'
     '"code":"no_available_workers","message":"No available workers (all circuits open or unhealthy)"}})',
     "rollout-engines-unreachable"),
    ("THUDM/slime#683", "(RolloutManager pid=519445) For more information check: "
     "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503, retrying... (attempt 60/60, "
     "url=http://10.78.210.151:4674/generate, response=No available workers (all circuits open or unhealthy))",
     "rollout-engines-unreachable"),
    # Ray's worker-log prefix and the ANSI colour Ray puts around it
    ("THUDM/slime#1297 with Ray's prefix", "\x1b[36m(MegatronTrainRayActor pid=76563, ip=10.1.49.166)\x1b[0m "
     "torch.AcceleratorError: CUDA error: an illegal memory access was encountered", "cuda-illegal-memory-access"),
]

# (source, line): healthy lines and look-alikes of the false positives the catalogue once had.
HEALTHY = [
    ("a lowercase level uvicorn accepts", "KeyError: 'info'"),
    ("a Megatron flag of another release, not SGLang's", "train.py: error: unrecognized arguments: --use-flash-attn"),
    ("SLIME placement_group.py heartbeat, first line of a wait that succeeds",
     "Waiting for placement group of 16 GPUs (elapsed 30s): 8 GPUs registered with Ray, 8 available."),
    ("sgl-project/sglang#26032", '(SGLangEngine pid=1493437) [2026-05-21 16:07:40] INFO:     7.150.10.22:41174 - '
     '"POST /update_weights_from_distributed HTTP/1.1" 200 OK'),
    ("sgl-project/sglang#26032", "[slime-pp_0] Update weights: 8it [00:01,  5.46it/s]"),
    ("THUDM/slime#1951 (allocator hint under the OOM)", "If reserved but unallocated memory is large try setting "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."),
    ("Megatron FSDP warning", "sequence parallelism requires setting the environment variable "
     "CUDA_DEVICE_MAX_CONNECTIONS to 1 while megatron_fsdp requires not setting CUDA_DEVICE_MAX_CONNECTIONS=1"),
    ("torch's hint after a CUDA error", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"),
]


def _ids(text: str) -> list[str]:
    return [i for line in text.splitlines() for i in MATCHER.match_line(line)]


@pytest.mark.parametrize(("source", "line", "expected"), FAILURES, ids=[f"{f[2]}:{f[0]}" for f in FAILURES])
def test_field_line_names_its_failure(source, line, expected):
    found = _ids(line)
    assert expected in found, f"{source}: {line!r} -> {found}"
    scanned = [ids for _, _, ids in MATCHER.scan_block(f"noise\n{line}\nmore noise\n".encode())]
    assert any(expected in ids for ids in scanned), source


@pytest.mark.parametrize(("source", "line"), HEALTHY, ids=[h[0] for h in HEALTHY])
def test_healthy_line_names_nothing(source, line):
    assert _ids(line) == [], f"{source}: {line!r}"


def test_an_oom_line_does_not_blame_the_pipeline_split():
    """A run without pipeline parallelism hit the OOM too (slime#1951, 4 GPUs): the line is cuda-oom only."""
    line = next(f[1] for f in FAILURES if f[0] == "THUDM/slime#1951")
    assert _ids(line) == ["cuda-oom"]


def test_pp_stage_oom_is_named_by_the_memory_check_line_it_guards():
    bad = evaluate_stage_memory(_shipped("qwen3-30b-a3b-disaggregated", "h100")(), _hw("h100"))
    near = evaluate_stage_memory(_qwen3_4b(), _hw("h100", 64.0))
    assert bad.status is Status.FAIL and "pp-stage-oom" in MATCHER.match_line(bad.summary), bad.summary
    assert near.status is Status.WARN and "pp-stage-oom" not in MATCHER.match_line(near.summary), near.summary


@pytest.mark.parametrize("elapsed", [30, 600, 1770])
def test_placement_wait_is_a_heartbeat_until_thirty_minutes(elapsed):
    line = f"Waiting for placement group of 20 GPUs (elapsed {elapsed}s): 16 GPUs registered with Ray, 16 available."
    assert "placement-group-oversubscribed" not in MATCHER.match_line(line)


@pytest.mark.parametrize("elapsed", [1800, 2400, 10020])
def test_placement_wait_past_thirty_minutes_is_the_failure(elapsed):
    line = f"Waiting for placement group of 20 GPUs (elapsed {elapsed}s): 16 GPUs registered with Ray, 16 available."
    assert "placement-group-oversubscribed" in MATCHER.match_line(line)


def test_field_corpus_recall_and_precision():
    """Every failure line found (recall 1.0), no healthy line claimed (precision over the corpus 1.0)."""
    hits = sum(expected in _ids(line) for _, line, expected in FAILURES)
    false = sum(bool(_ids(line)) for _, line in HEALTHY)
    assert (hits, false) == (len(FAILURES), 0)
