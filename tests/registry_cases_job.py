"""Registry rows for the checks that judge a job as launched: recipe_argv_intact, recipe_no_inline_secrets and
recipe_job_shape."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.job import capture
from rlcheck.job.job import Job
from rlcheck.preflight import gate
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.verdict import Status

JOBS = Path(__file__).parent / "data" / "jobs"
H200 = get_profile("h200")
GB200 = get_profile("gb200")
RENDERED = capture.capture(JOBS / "render.json")  # argv-json: read without the sandbox
ARGV = RENDERED.argv
FAKE_HF = "hf_" + "rlcheckMadeUpTokenShape" + "0" * 10


def _job(**kw) -> Job:
    fields = {"argv": ARGV, "intended_argv": ARGV, "entrypoint": subprocess.list2cmdline(list(ARGV)),
              "env": RENDERED.env, "source": "recorded", "source_format": "ray-submit", **kw}
    return Job(**fields)


def _on_h200(job: Job):
    return inputs_for_job(job, H200)


QUOTED = _job(entrypoint=" ".join(map(repr, ARGV)), argv=ARGV)
CASES = {
    "recipe_argv_intact": [
        ("recipe", gate.inputs_for("qwen3-30b-a3b-disaggregated", H200), None, Status.PASS),
        ("render-json", _on_h200(RENDERED), None, Status.PASS),
        ("rayjob-quoted", _on_h200(QUOTED), None, Status.PASS),
        ("bare-bracket-list", _on_h200(_job()), None, Status.WARN),
        ("glob-replaced", _on_h200(_job(argv=tuple("1" if t == "[1]*48" else t for t in ARGV))), None,
         Status.FAIL),
        ("bad-substitution", _on_h200(_job(argv=("bash", "-c", "python3 train.py ${A[@]}"),
                                           intended_argv=("bash", "-c", "python3 train.py ${A[@]}"),
                                           shell_error="the entrypoint never starts python under /bin/sh -c "
                                                       "(exit 2; stderr: /bin/sh: 1: Bad substitution)")),
         None, Status.FAIL),
    ],
    "recipe_no_inline_secrets": [
        ("recipe", gate.inputs_for(recipes.DEFAULT_RECIPE, H200), None, Status.PASS),
        ("job-env-names-only", _on_h200(_job(env=(*RENDERED.env, ("HF_TOKEN", "${HF_TOKEN}")))), None,
         Status.PASS),
        ("hf-token-in-runtime-env", _on_h200(_job(env=(*RENDERED.env, ("HF_TOKEN", FAKE_HF)))), None,
         Status.FAIL),
        ("token-shape-in-argv", _on_h200(_job(argv=(*ARGV, "--custom-config", FAKE_HF))), None, Status.FAIL),
    ],
    "recipe_job_shape": [
        ("recipe", gate.inputs_for("qwen3-30b-a3b-disaggregated", H200), None, Status.PASS),
        ("2x8-on-h200", _on_h200(_job(nodes=2, gpus_per_node=8)), None, Status.PASS),
        ("ray-start-8-on-gb200", inputs_for_job(_job(nodes=1, gpus_per_node=8), GB200), None, Status.FAIL),
        ("4-per-node-on-h200", _on_h200(_job(nodes=2, gpus_per_node=4)), None, Status.WARN),
        ("submit-line-states-none", _on_h200(_job()), None, Status.SKIP),
    ],
}
