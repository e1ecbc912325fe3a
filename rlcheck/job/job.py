"""The Job: what the trainer will receive, the cluster it expects and where it came from.

A built-in recipe and a user's launch (script, `ray job submit` line, RayJob, argv JSON) both become a Job;
the checks judge the Recipe read back from its argv (rlcheck.job.to_recipe), one path for ours and theirs.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from rlcheck import secret_guard
from rlcheck.cluster import launch
from rlcheck.framework.detect import FRAMEWORKS, Installed, with_job
from rlcheck.probes.recipe import inline_secrets
from rlcheck.probes.recipe.inline_secrets import REDACTED, find_inline_secrets, redact_entrypoint, redacted_places
from rlcheck.probes.recipe.inline_secrets import redact as redact_argv
from rlcheck.recipes.recipe import Recipe
from rlcheck.secret_guard import is_reference, is_secret_name, secret_shape

FORMATS = ("bash", "miles-py", "ray-submit", "rayjob", "argv-json", "job-json", "recipe")
"""Where a Job can come from: a launch script or a Miles Python launcher (run in a sandbox), a pasted
`ray job submit ... -- ...` line, a KubeRay RayJob YAML, `rlcheck render --format json` output, `rlcheck job capture`
output, a built-in recipe."""

@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Job:
    """One launch as the trainer will see it."""

    argv: tuple[str, ...]
    """The trainer's argv after Ray's entrypoint went through /bin/sh -c (what train.py really receives)."""
    intended_argv: tuple[str, ...]
    """The trainer's argv as the launch meant it (the tokens after `ray job submit --`, before the shell)."""
    entrypoint: str
    """The shell string Ray runs (`/bin/sh -c ENTRYPOINT`); '' when the trainer was run directly."""
    env: tuple[tuple[str, str], ...] = ()
    """Runtime env vars (the runtime env's env_vars)."""
    working_dir: str | None = None
    """The runtime env's working_dir, or the script's directory."""
    nodes: int | None = None
    """GPU nodes the launch expects (RayJob worker replicas, `ray start`, render's gpu_nodes); None: not stated."""
    gpus_per_node: int | None = None
    framework: str = "unknown"
    """slime, miles or unknown (the RayJob image, a Miles launcher, else the trainer path and working dir)."""
    framework_version: str | None = None
    """Its version when the launch states it: a RayJob image tag such as slimerl/slime:v0.3.1, or the git checkout a
    captured script lives in ('0.3.1' at a release tag, 'main' between tags); None: not stated, or not known (a tree
    without git)."""
    source: str
    """The file (or recipe id) the Job was captured from."""
    source_format: str
    """One of FORMATS."""
    shell_error: str = ""
    """Why the trainer never started when the entrypoint was replayed under /bin/sh -c ('' when it did)."""
    unseen: str = ""
    """Why the trainer command could not be seen (the entrypoint runs a file not on this machine); '' if seen."""
    findings: tuple[str, ...] = ()
    """What capture noticed without judging: argv the shell changed, globbing, a submit without `--`."""
    inline_secrets: tuple[str, ...] = ()
    """Where secrets sat in the launch when it was written with them redacted ('env HF_TOKEN (by name)'), so the
    written Job is judged as the launch was; never the values."""

    def __post_init__(self) -> None:
        if self.source_format not in FORMATS:
            raise ValueError(f"source_format={self.source_format!r}: one of {', '.join(FORMATS)}")
        if not self.argv:
            raise ValueError("argv=(): the trainer command is required")
        for field in ("nodes", "gpus_per_node"):
            value = getattr(self, field)
            if value is not None and value <= 0:
                raise ValueError(f"{field}={value}: must be > 0 or None")

    def env_dict(self) -> dict[str, str]:
        return dict(self.env)

    def secret_places(self) -> list[str]:
        """Where this Job carries secrets: what capture recorded, and what the finder sees in it now."""
        found = find_inline_secrets(self.argv, self.env_dict(), self.entrypoint, self.intended_argv)
        return inline_secrets.unique_places([*found, *self.inline_secrets])

    def to_dict(self, *, redact: bool = True) -> dict[str, Any]:
        """JSON-ready; unless redact=False every secret (by name, by shape, a --job-env value) is hidden: in the env,
        argv, entrypoint and the texts, with where each sat kept in inline_secrets."""
        doc = dataclasses.asdict(self)
        doc["env"] = dict(self.env)
        for key in ("argv", "intended_argv", "findings", "inline_secrets"):
            doc[key] = list(getattr(self, key))
        if not redact:
            return doc
        doc["inline_secrets"] = self.secret_places()
        # An empty value or a reference is no secret (env_vars with HF_TOKEN="" to fill in later): left as it is.
        doc["env"] = {k: REDACTED if (is_secret_name(k) and not is_reference(v)) or secret_shape(v) else v
                      for k, v in self.env}
        doc["argv"], doc["intended_argv"] = redact_argv(self.argv), redact_argv(self.intended_argv)
        doc["entrypoint"] = redact_entrypoint(self.entrypoint)
        scrubbed: dict[str, Any] = secret_guard.scrub(doc)
        return scrubbed

    @classmethod
    def from_dict(cls, doc: dict[str, Any], source: str) -> Job:
        """A Job written by `rlcheck job capture`; ValueError names the bad field."""
        try:
            return cls(argv=tuple(doc["argv"]), intended_argv=tuple(doc.get("intended_argv") or doc["argv"]),
                       entrypoint=str(doc.get("entrypoint", "")), env=tuple(dict(doc.get("env") or {}).items()),
                       working_dir=doc.get("working_dir"), nodes=doc.get("nodes"),
                       gpus_per_node=doc.get("gpus_per_node"), framework=doc.get("framework", "unknown"),
                       framework_version=doc.get("framework_version"), source=source,
                       source_format="job-json", findings=tuple(doc.get("findings") or ()),
                       inline_secrets=tuple(doc["inline_secrets"]) if "inline_secrets" in doc else tuple(
                           redacted_places(list(doc["argv"]), dict(doc.get("env") or {}),
                                           str(doc.get("entrypoint", "")))),
                       shell_error=str(doc.get("shell_error", "")), unseen=str(doc.get("unseen", "")))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{source}: not a captured job ({exc}); expected keys argv, env, entrypoint") from exc


def framework_of(argv: tuple[str, ...], working_dir: str | None) -> str:
    where = " ".join([*argv[:2], working_dir or ""]).lower()
    return "miles" if "miles" in where else "slime" if "slime" in where else "unknown"


def judged_framework(here: Installed, job: Job | None) -> Installed:
    """The framework the checks judge: `here` (--framework, else the one importable) when it names one, else the
    job's own framework and version; Installed(None) when neither (the Recipe read from the job carries its
    framework, so each check falls back to that framework's default)."""
    if job is None:
        return here
    return with_job(here, job.framework, job.framework_version, f"{job.source_format} {job.source}")


def framework_why(job: Job | None, recipe_framework: str) -> str:
    """Where the recipe's framework came from, for a verdict judged by its default schema."""
    if job is None:
        return f"the recipe's framework ({recipe_framework})"
    if job.framework in FRAMEWORKS:
        return f"the job's framework, {job.framework} ({job.source_format}, no version stated)"
    return f"{recipe_framework}, the default (the job names neither SLIME nor Miles)"


def json_dumps(job: Job, *, redact: bool = True) -> str:
    return json.dumps(job.to_dict(redact=redact), indent=2) + "\n"


def job_from_recipe(recipe: Recipe) -> Job:
    """A built-in recipe as a Job: the argv rlcheck submits intact, its runtime env, the framework SLIME."""
    argv = tuple(recipe.argv())
    gpus = recipe.placement.num_gpus_per_node
    nodes = -(-recipe.placement.placement_group_gpus // gpus)
    return Job(argv=argv, intended_argv=argv, entrypoint=launch.entrypoint(argv), env=recipe.env,
               nodes=nodes, gpus_per_node=gpus, framework="slime", source=recipe.id, source_format="recipe")
