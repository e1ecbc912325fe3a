"""Rule table for the Job (rlcheck.job.job): the fields it refuses, what a written Job hides and where each secret sat,
a captured Job read back (and the whole error for one that is not), the framework named by the trainer path or
working dir, the framework the checks judge and the sentence saying where it came from, a built-in recipe as a Job."""

from __future__ import annotations

import json

import pytest

from rlcheck.cluster import launch
from rlcheck.framework.detect import JOB_SOURCE, Installed
from rlcheck.job import job as job_mod
from rlcheck.job.job import FORMATS, Job
from rlcheck.recipes.cases import BASES

HF = "hf_abcdefghijklmnopqrstuvwxyz012345"


def _job(**fields) -> Job:
    return Job(**{"argv": ("python3", "t.py"), "intended_argv": ("python3", "t.py"), "entrypoint": "", "source": "s",
                  "source_format": "bash", **fields})


# --- __post_init__ -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("fields", "error"), [
    ({"source_format": "yaml"}, f"source_format='yaml': one of {', '.join(FORMATS)}"),
    ({"argv": ()}, "argv=(): the trainer command is required"),
    ({"nodes": 0}, "nodes=0: must be > 0 or None"),
    ({"gpus_per_node": -1}, "gpus_per_node=-1: must be > 0 or None"),
    ({"nodes": 2, "gpus_per_node": 0}, "gpus_per_node=0: must be > 0 or None"),
])
def test_a_job_refuses_what_no_launch_has(fields, error):
    with pytest.raises(ValueError) as exc:
        _job(**fields)
    assert str(exc.value) == error


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_and_the_smallest_counts_are_a_job(fmt):
    job = _job(source_format=fmt, nodes=1, gpus_per_node=1)
    assert (job.source_format, job.nodes, job.gpus_per_node) == (fmt, 1, 1)


# --- to_dict: what a written Job shows --------------------------------------------------------------------------------

SECRET_JOB = _job(argv=("python3", "t.py", "--wandb-key", "abcd1234abcd1234abcd", "--x", HF),
                  intended_argv=("python3", "t.py", "--wandb-key", "abcd1234abcd1234abcd"),
                  entrypoint="WANDB_API_KEY=sekrit123456 python3 t.py",
                  env=(("HF_TOKEN", HF), ("HF_TOKEN2", ""), ("WANDB_API_KEY", "${WANDB_API_KEY}"), ("X", "1"),
                       ("URL", "https://u:pass12345@h/x")),
                  findings=(f"token {HF} seen",), inline_secrets=("env OLD_TOKEN (by name)",))
PLACES = ["env HF_TOKEN (by name)", "env URL (url-credentials shape)", "argv token 3 (--wandb-key, by name)",
          "argv token 5 (hf-token shape)", "entrypoint prefix WANDB_API_KEY (by name)", "env OLD_TOKEN (by name)"]


def test_a_written_job_hides_every_secret_and_keeps_where_it_sat():
    assert SECRET_JOB.to_dict() == {
        "argv": ["python3", "t.py", "--wandb-key", "<redacted>", "--x", "<redacted:hf-token>"],
        "intended_argv": ["python3", "t.py", "--wandb-key", "<redacted>"],
        "entrypoint": "WANDB_API_KEY=<redacted> python3 t.py",
        # an empty value or a reference is no secret: left as it is
        "env": {"HF_TOKEN": "<redacted>", "HF_TOKEN2": "", "WANDB_API_KEY": "${WANDB_API_KEY}", "X": "1",
                "URL": "<redacted>"},
        "working_dir": None, "nodes": None, "gpus_per_node": None, "framework": "unknown", "framework_version": None,
        "source": "s", "source_format": "bash", "shell_error": "", "unseen": "",
        "findings": ["token <redacted:hf-token> seen"], "inline_secrets": PLACES}
    assert SECRET_JOB.secret_places() == PLACES


def test_a_job_written_unredacted_is_the_job_as_lists_and_a_mapping():
    doc = SECRET_JOB.to_dict(redact=False)
    assert (doc["argv"], doc["intended_argv"], doc["entrypoint"], doc["env"], doc["findings"], doc["inline_secrets"]) \
        == (list(SECRET_JOB.argv), list(SECRET_JOB.intended_argv), SECRET_JOB.entrypoint, dict(SECRET_JOB.env),
            list(SECRET_JOB.findings), ["env OLD_TOKEN (by name)"])
    assert job_mod.json_dumps(SECRET_JOB, redact=False) == json.dumps(doc, indent=2) + "\n"
    assert job_mod.json_dumps(SECRET_JOB) == json.dumps(SECRET_JOB.to_dict(), indent=2) + "\n"


def test_a_job_without_secrets_is_written_as_it_is():
    job = _job(env=(("A", "1"),), working_dir="/w", nodes=2, gpus_per_node=8, framework="slime",
               framework_version="0.3.1")
    assert job.to_dict() == job.to_dict(redact=False) | {"inline_secrets": []}
    assert job.env_dict() == {"A": "1"}


# --- from_dict: a captured Job read back ------------------------------------------------------------------------------

def test_a_written_job_reads_back_as_the_job():
    job = _job(env=(("A", "1"),), working_dir="/w", nodes=2, gpus_per_node=8, framework="slime",
               framework_version="0.3.1", findings=("f",), shell_error="e", unseen="u", entrypoint="python3 t.py",
               intended_argv=("python3", "t.py", "x"))
    back = Job.from_dict(json.loads(job_mod.json_dumps(job)), "job.json")
    assert back == job.__class__(**{**{f: getattr(job, f) for f in job.__slots__}, "source": "job.json",
                                    "source_format": "job-json"})


def test_a_written_secret_job_reads_back_with_its_places():
    back = Job.from_dict(SECRET_JOB.to_dict(), "job.json")
    assert back.inline_secrets == tuple(PLACES)
    assert back.env_dict()["HF_TOKEN"] == "<redacted>"


def test_the_fewest_keys_a_captured_job_needs():
    back = Job.from_dict({"argv": ["python3", "t.py", "--key", "<redacted>"], "env": {"TOKEN": "<redacted>"}}, "j")
    assert (back.argv, back.intended_argv, back.entrypoint, back.env, back.working_dir, back.nodes,
            back.gpus_per_node, back.framework, back.framework_version, back.findings, back.shell_error,
            back.unseen, back.source, back.source_format) == (
        ("python3", "t.py", "--key", "<redacted>"), ("python3", "t.py", "--key", "<redacted>"), "",
        (("TOKEN", "<redacted>"),), None, None, None, "unknown", None, (), "", "", "j", "job-json")
    # a Job written before inline_secrets was kept: its places are read from the redaction markers
    assert back.inline_secrets == ("env TOKEN (redacted by rlcheck job capture)",
                                   "argv token 3 (redacted by rlcheck job capture)")
    assert Job.from_dict({"argv": ["python3"], "env": None, "intended_argv": [], "findings": None}, "j").env == ()


@pytest.mark.parametrize(("doc", "why"), [
    ({}, "'argv'"),
    ({"argv": None}, "'NoneType' object is not iterable"),
    ({"argv": ["python3"], "inline_secrets": 3}, "'int' object is not iterable"),
])
def test_a_document_that_is_not_a_captured_job_is_refused(doc, why):
    # (capture's reader checks each key's type first: these are what reaches the Job all the same)
    with pytest.raises(ValueError) as exc:
        Job.from_dict(doc, "j.json")
    assert str(exc.value) == f"j.json: not a captured job ({why}); expected keys argv, env, entrypoint"
    assert isinstance(exc.value.__cause__, (KeyError, TypeError))


def test_a_bad_field_of_a_captured_job_is_refused_by_the_job():
    with pytest.raises(ValueError, match=r"^nodes=0: must be > 0 or None$"):
        Job.from_dict({"argv": ["python3"], "nodes": 0}, "j.json")


# --- the framework ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "working_dir", "framework"), [
    (("python3", "/root/Miles/train.py"), None, "miles"),
    (("python3", "/root/slime/train.py"), None, "slime"),
    (("/opt/slime/bin/python", "train.py"), None, "slime"),
    (("python3", "train.py"), "/work/SLIME", "slime"),
    (("python3", "train.py", "/root/miles/x"), None, "unknown"),  # only the interpreter and the script count
    (("python3", "/slime/miles/train.py"), None, "miles"),  # miles before slime
    (("python3", "train.py"), None, "unknown"),
    (("python3",), "", "unknown"),
])
def test_framework_of_the_trainer_path_and_working_dir(argv, working_dir, framework):
    assert job_mod.framework_of(argv, working_dir) == framework


HERE = Installed(framework="slime", version="0.2.4", source="--framework")


@pytest.mark.parametrize(("here", "job", "judged"), [
    (HERE, None, HERE),
    (Installed(framework=None), None, Installed(framework=None)),
    (HERE, _job(framework="miles", framework_version="0.1.0"), HERE),
    (Installed(framework=None), _job(framework="miles", framework_version="0.1.0", source_format="rayjob",
                                     source="j.yaml"),
     Installed(framework="miles", version="0.1.0", source=f"{JOB_SOURCE}: rayjob j.yaml")),
    (Installed(framework=None), _job(framework="slime"), Installed(framework=None)),
])
def test_judged_framework(here, job, judged):
    assert job_mod.judged_framework(here, job) == judged


@pytest.mark.parametrize(("job", "why"), [
    (None, "the recipe's framework (slime)"),
    (_job(framework="miles"), "the job's framework, miles (bash, no version stated)"),
    (_job(framework="slime", source_format="rayjob"), "the job's framework, slime (rayjob, no version stated)"),
    (_job(framework="unknown"), "slime, the default (the job names neither SLIME nor Miles)"),
])
def test_framework_why(job, why):
    assert job_mod.framework_why(job, "slime") == why


# --- job_from_recipe ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(BASES))
def test_a_built_in_recipe_is_a_job_of_its_own_argv_and_shape(name):
    recipe = BASES[name]()
    job = job_mod.job_from_recipe(recipe)
    gpus = recipe.placement.num_gpus_per_node
    assert (job.argv, job.intended_argv, job.entrypoint, job.env, job.gpus_per_node, job.framework, job.source,
            job.source_format) == (tuple(recipe.argv()), tuple(recipe.argv()), launch.entrypoint(recipe.argv()),
                                   recipe.env, gpus, "slime", recipe.id, "recipe")
    assert job.nodes == -(-recipe.placement.placement_group_gpus // gpus)


@pytest.mark.parametrize(("gpus", "per_node", "nodes"), [(8, 8, 1), (9, 8, 2), (16, 8, 2), (4, 8, 1), (17, 8, 3)])
def test_a_recipes_nodes_round_up(gpus, per_node, nodes):
    recipe = BASES["qwen3-4b-colocated"]()
    placement = recipe.placement.__class__(actor_num_nodes=1, actor_gpus_per_node=gpus, colocate=True,
                                           num_gpus_per_node=per_node)
    assert job_mod.job_from_recipe(recipe.replace(placement=placement)).nodes == nodes


def test_a_secret_only_in_the_argv_as_meant_is_found():
    job = _job(intended_argv=("python3", "t.py", "--wandb-key", "abcd1234abcd1234abcd"))
    assert job.secret_places() == ["entrypoint token 3 (--wandb-key, by name)"]


def test_a_captured_jobs_redacted_entrypoint_is_a_place_of_a_secret():
    back = Job.from_dict({"argv": ["python3"], "entrypoint": "HF_TOKEN=<redacted> python3 t.py"}, "j")
    assert back.inline_secrets == ("entrypoint (redacted by rlcheck job capture)",)
