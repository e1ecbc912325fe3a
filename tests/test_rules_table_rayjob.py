"""Rule table for a KubeRay RayJob read as a Job (rlcheck.job.rayjob): the cluster shape from the head's and worker
groups' GPU limits (else requests) and replicas, the framework and version of the head image, the entrypoint and the
runtime env, and the whole error for each field of the wrong kind. The entrypoint's replay under /bin/sh is
rlcheck.job.replay's (its own table): here a recorded replay stands in for it."""

from __future__ import annotations

import pytest
import yaml

from rlcheck.job import rayjob
from rlcheck.job import replay as replay_mod
from rlcheck.job.submit import CaptureFailed, JobFormatError

HEAD = "spec.rayClusterSpec.headGroupSpec"


def _pod(gpus=None, part="limits", image="rayproject/ray:2.9"):
    container = {"image": image}
    if gpus is not None:
        container["resources"] = {part: {"nvidia.com/gpu": gpus}}
    return {"spec": {"containers": [container]}}


def _cluster(head=None, *workers):
    return {"headGroupSpec": {"template": head if head is not None else _pod()},
            "workerGroupSpecs": [{"replicas": n, "template": pod} for n, pod in workers]}


# --- shape: GPU nodes and GPUs per node ------------------------------------------------------------------------------

@pytest.mark.parametrize(("cluster", "result"), [
    (None, (None, None, ["no rayClusterSpec (the job runs on an existing cluster): shape not stated"])),
    ("text", (None, None, ["no rayClusterSpec (the job runs on an existing cluster): shape not stated"])),
    ({}, (None, None, ["rayClusterSpec asks for no nvidia.com/gpu: shape not stated"])),
    (_cluster(None, (2, _pod())), (None, None, ["rayClusterSpec asks for no nvidia.com/gpu: shape not stated"])),
    (_cluster(None, (0, _pod(8))), (None, None, ["rayClusterSpec asks for no nvidia.com/gpu: shape not stated"])),
    (_cluster(None, (2, _pod(8))), (2, 8, [])),
    (_cluster(None, (2, _pod("8"))), (2, 8, [])),  # a quantity written as a string
    (_cluster(None, (2, _pod(8, "requests"))), (2, 8, [])),  # requests when there are no limits
    (_cluster(_pod(8), (3, _pod(8))), (4, 8, [])),  # the head is one GPU node too
    (_cluster(_pod(8)), (1, 8, [])),
    (_cluster(None, (2, _pod(8)), (1, _pod(4))),
     (3, 4, ["worker groups differ in GPUs per node ([4, 8]): judged on the narrowest, 4"])),
    (_cluster(None, (2, _pod(8)), (1, _pod(0))), (2, 8, [])),  # a group without GPUs is not a GPU node
])
def test_shape_from_the_gpu_groups(cluster, result):
    assert rayjob.shape(cluster) == result


def test_a_worker_group_without_replicas_is_one_node():
    assert rayjob.shape({"workerGroupSpecs": [{"template": _pod(8)}]}) == (1, 8, [])


def test_limits_before_requests_and_the_first_container():
    pod = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 4}, "requests": {"nvidia.com/gpu": 2}}},
                                   {"resources": {"limits": {"nvidia.com/gpu": 8}}}]}}
    assert rayjob._gpus(pod, "x") == 4
    pod["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": 0}
    assert rayjob._gpus(pod, "x") == 2


@pytest.mark.parametrize("pod", [None, {}, {"spec": {}}, {"spec": {"containers": []}}, {"spec": {"containers": [{}]}},
                                 {"spec": {"containers": [{"resources": {}}]}}])
def test_a_pod_that_asks_for_no_gpu_has_none(pod):
    assert rayjob._gpus(pod, "x") == 0


@pytest.mark.parametrize(("cluster", "error"), [
    ({"headGroupSpec": []}, "spec.rayClusterSpec.headGroupSpec: expected a mapping, found list"),
    ({"headGroupSpec": {"template": "x"}}, f"{HEAD}.template: expected a mapping, found str"),
    ({"headGroupSpec": {"template": {"spec": []}}}, f"{HEAD}.spec: expected a mapping, found list"),
    ({"headGroupSpec": {"template": {"spec": {"containers": {}}}}},
     f"{HEAD}.spec.containers: expected a list, found dict"),
    ({"headGroupSpec": {"template": {"spec": {"containers": ["x"]}}}},
     f"{HEAD}.spec.containers[0]: expected a mapping, found str"),
    ({"headGroupSpec": {"template": {"spec": {"containers": [{"resources": []}]}}}},
     f"{HEAD}.spec.containers[0].resources: expected a mapping, found list"),
    ({"headGroupSpec": {"template": {"spec": {"containers": [{"resources": {"limits": []}}]}}}},
     f"{HEAD}.spec.containers[0].resources.limits: expected a mapping, found list"),
    ({"headGroupSpec": {"template": _pod([8])}},
     f"{HEAD}.spec.containers[0].resources.limits.nvidia.com/gpu: expected an integer or a string, found list"),
    ({"headGroupSpec": {"template": _pod(8, "requests")}, "workerGroupSpecs": {}},
     "spec.rayClusterSpec.workerGroupSpecs: expected a list, found dict"),
    (_cluster(None, ("two", _pod(8))), "spec.rayClusterSpec.workerGroupSpecs[0].replicas='two': expected a whole "
                                       "number"),
    (_cluster(None, (-1, _pod(8))), "spec.rayClusterSpec.workerGroupSpecs[0].replicas=-1: expected >= 0"),
    ({"workerGroupSpecs": [{"template": []}]},
     "spec.rayClusterSpec.workerGroupSpecs[0].template: expected a mapping, found list"),
    (_cluster(None, (1, _pod("8x"))),
     "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.nvidia.com/gpu='8x': "
     "expected a whole number"),
])
def test_a_field_of_the_wrong_kind_is_named(cluster, error):
    with pytest.raises(JobFormatError) as exc:
        rayjob.shape(cluster)
    assert str(exc.value) == error


# --- _version: the head image --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("image", "version"), [
    ("slimerl/slime:v0.3.1", ("slime", "0.3.1")),
    ("slimerl/slime:0.2.4", ("slime", "0.2.4")),
    ("registry/Miles-dev:v0.1.0rc1", ("miles", "0.1.0rc1")),
    ("slimerl/slime:latest", ("unknown", None)),
    ("rayproject/ray:2.9.0", ("unknown", None)),
    ("slime/ray:1.0", ("unknown", None)),  # slime names the registry path, not the image: a / between
    ("", ("unknown", None)),
])
def test_the_framework_and_version_of_the_head_image(image, version):
    assert rayjob._version(_cluster(_pod(8, image=image))) == version


@pytest.mark.parametrize("cluster", [None, {}, {"headGroupSpec": {"template": {"spec": {"containers": []}}}},
                                     {"headGroupSpec": []}, {"headGroupSpec": {"template": {"spec": {"containers": [
                                         "slime:v1"]}}}}])
def test_no_head_image_is_no_version(cluster):
    assert rayjob._version(cluster) == ("unknown", None)


# --- read_rayjob: the Job -------------------------------------------------------------------------------------------

@pytest.fixture
def replayed(monkeypatch):
    """The replay of the entrypoint, recorded: the argv as meant, and one finding naming it."""
    asked = []

    def replay(tokens, entrypoint=None, working_dir=None):
        asked.append((tokens, entrypoint, working_dir))
        return replay_mod.Replayed(entrypoint=entrypoint, argv=(*tokens, "--replayed"), findings=("the replay",),
                                   shell_error="err" if "fail" in tokens else "", unseen="gone" if "gone" in tokens
                                   else "")
    monkeypatch.setattr(replay_mod, "replay", replay)
    return asked


def _manifest(spec, *others, kind="RayJob"):
    return yaml.safe_dump_all([*others, {"apiVersion": "ray.io/v1", "kind": kind, "spec": spec}])


def test_a_rayjob_is_read(replayed):
    spec = {"entrypoint": "python3 /root/slime/train.py --x 1",
            "runtimeEnvYAML": "working_dir: /w\nenv_vars:\n  A: '1'\n  B: 2\n",
            "rayClusterSpec": _cluster(_pod(image="slimerl/slime:v0.3.1"), (2, _pod(8)), (1, _pod(4)))}
    job = rayjob.read_rayjob(_manifest(spec, {"kind": "ConfigMap"}), "job.yaml")
    assert (job.argv, job.intended_argv, job.entrypoint, job.env, job.working_dir, job.nodes, job.gpus_per_node,
            job.framework, job.framework_version, job.source, job.source_format, job.findings, job.shell_error,
            job.unseen) == (
        ("python3", "/root/slime/train.py", "--x", "1", "--replayed"), ("python3", "/root/slime/train.py", "--x", "1"),
        "python3 /root/slime/train.py --x 1", (("A", "1"), ("B", "2")), "/w", 3, 4, "slime", "0.3.1", "job.yaml",
        "rayjob", ("worker groups differ in GPUs per node ([4, 8]): judged on the narrowest, 4", "the replay"), "", "")
    # the entrypoint is replayed as written (Ray runs the RayJob's own string, not one it built)
    assert replayed == [(("python3", "/root/slime/train.py", "--x", "1"), "python3 /root/slime/train.py --x 1", "/w")]


def test_the_head_images_framework_over_the_trainers_path(replayed):
    spec = {"entrypoint": "python3 /root/slime/train.py",
            "rayClusterSpec": _cluster(_pod(image="radixark/miles:v0.1.0"), (1, _pod(8)))}
    job = rayjob.read_rayjob(_manifest(spec), "job.yaml")
    assert (job.framework, job.framework_version) == ("miles", "0.1.0")


@pytest.mark.parametrize(("entrypoint", "working_dir", "framework"), [
    ("python3 /root/miles/train.py fail", None, "miles"),  # no image version: the trainer's path
    ("python3 train.py gone", "/opt/slime", "slime"),  # else the working dir
    ("python3 train.py", None, "unknown"),
])
def test_without_a_framework_image_the_entrypoint_and_working_dir_name_it(replayed, entrypoint, working_dir,
                                                                           framework):
    env = f"working_dir: {working_dir}\n" if working_dir else ""
    job = rayjob.read_rayjob(_manifest({"entrypoint": entrypoint, "runtimeEnvYAML": env}), "j.yaml")
    assert (job.framework, job.framework_version, job.working_dir, job.env, job.nodes, job.gpus_per_node,
            job.findings) == (framework, None, working_dir, (), None, None,
                              ("no rayClusterSpec (the job runs on an existing cluster): shape not stated",
                               "the replay"))
    assert (job.shell_error, job.unseen) == ("err" if "fail" in entrypoint else "", "gone" if "gone" in entrypoint
                                             else "")


@pytest.mark.parametrize(("text", "error"), [
    ("kind: Pod\n", "j.yaml: not a RayJob (found kind Pod); --job takes a KubeRay RayJob YAML"),
    ("- a\n---\nkind: Pod\n---\n{}\n", "j.yaml: not a RayJob (found kind list, Pod, no kind); --job takes a KubeRay "
                                       "RayJob YAML"),
    ("", "j.yaml: not a RayJob (found kind nothing); --job takes a KubeRay RayJob YAML"),
    ("kind: RayJob\nspec: []\n", "j.yaml: RayJob.spec: expected a mapping, found list"),
    ("kind: RayJob\nspec:\n  entrypoint: 3\n", "j.yaml: RayJob spec.entrypoint: expected a string, found int"),
    ("kind: RayJob\nspec:\n  entrypoint: python3 t.py\n  runtimeEnvYAML: '- a'\n",
     "j.yaml: spec.runtimeEnvYAML is list, expected a mapping"),
    ("kind: RayJob\nspec:\n  entrypoint: python3 t.py\n  runtimeEnvYAML: 'env_vars: [1]'\n",
     "j.yaml: runtime env env_vars is list, expected a mapping"),
    ("kind: RayJob\nspec:\n  entrypoint: python3 t.py\n  runtimeEnvYAML: 'working_dir: 3'\n",
     "j.yaml: spec.runtimeEnvYAML.working_dir: expected a string, found int"),
    ("a: &x 1\nb: *x\n", "j.yaml: the manifest uses a YAML alias (*x); rlcheck reads no aliases (a few lines of them "
                         "can expand to gigabytes): write the values out"),
    ("kind: RayJob\nspec:\n  entrypoint: python3 t.py\n  runtimeEnvYAML: 'a: &x 1\n\n    b: *x'\n",
     "j.yaml: spec.runtimeEnvYAML uses a YAML alias (*x); rlcheck reads no aliases (a few lines of them can expand to "
     "gigabytes): write the values out"),
    ("kind: RayJob\nspec:\n  entrypoint: python3 t.py\n  runtimeEnvYAML: 3\n",
     "j.yaml: RayJob spec.runtimeEnvYAML: expected a string, found int"),
])
def test_a_manifest_rlcheck_cannot_read_is_refused_naming_why(replayed, text, error):
    with pytest.raises(JobFormatError) as exc:
        rayjob.read_rayjob(text, "j.yaml")
    assert str(exc.value) == error


@pytest.mark.parametrize(("spec", "error"), [
    ({}, "j.yaml: RayJob spec.entrypoint is missing or empty"),
    ({"entrypoint": "  "}, "j.yaml: RayJob spec.entrypoint is missing or empty"),
    ({"entrypoint": "python3 'x"}, "j.yaml: spec.entrypoint is not a shell command (No closing quotation)"),
])
def test_a_rayjob_without_a_command_gives_no_trainer(replayed, spec, error):
    with pytest.raises(CaptureFailed) as exc:
        rayjob.read_rayjob(_manifest(spec), "j.yaml")
    assert str(exc.value) == error


def test_no_spec_is_no_entrypoint(replayed):
    with pytest.raises(CaptureFailed, match=r"^j\.yaml: RayJob spec\.entrypoint is missing or empty$"):
        rayjob.read_rayjob("kind: RayJob\n", "j.yaml")


def test_the_first_rayjob_of_the_manifest_is_read(replayed):
    text = yaml.safe_dump_all([{"kind": "RayJob", "spec": {"entrypoint": "python3 a.py"}},
                               {"kind": "RayJob", "spec": {"entrypoint": "python3 b.py"}}])
    assert rayjob.read_rayjob(text, "j.yaml").intended_argv == ("python3", "a.py")
