"""Rule table for which SLIME or Miles version judges a launch (rlcheck.framework.detect): the schema chosen and the
whole reason the report gives, for each way the framework is known (declared, installed, the job's own), each kind
of version (a release with a schema of its own, one without, main, unknown), and the texts a user reads."""

from __future__ import annotations

import pytest

from rlcheck.framework import detect
from rlcheck.framework.detect import JOB_SOURCE, Installed

JOB = f"{JOB_SOURCE}: the RayJob image tag"


@pytest.mark.parametrize(("installed", "schema", "why"), [
    (Installed(framework="slime", version="0.2.4", source="--framework"), "slime-v0.2.4", "declared slime 0.2.4"),
    (Installed(framework="slime", version="0.3.1", source="package metadata"), "slime-v0.3.1",
     "installed slime 0.3.1"),
    # a release without a schema of its own: judged by main, and the reason says so
    (Installed(framework="slime", version="0.2.5", source="--framework"), "slime-main",
     "declared slime 0.2.5: no schema of its own, judged by slime-main"),
    (Installed(framework="slime", main=True, source="--framework"), "slime-main", "declared slime main"),
    (Installed(framework="slime", main=True, source="git commit 624b824a8 (no release tag: judged as main)"),
     "slime-main", "installed slime main"),
    # a checkout git could not date: no release, not main either, and the reason does not pretend it is main
    (Installed(framework="slime", source="no package metadata"), "slime-main",
     "installed slime without a release version: no schema of its own, judged by slime-main"),
    # Miles has one schema: every version is judged by it exactly
    (Installed(framework="miles", version="0.1.0", source="package metadata"), "miles-main", "installed miles 0.1.0"),
    (Installed(framework="miles", source="no package metadata"), "miles-main",
     "installed miles without a release version"),
    (Installed(framework="slime", version="0.3.1", source=JOB), "slime-v0.3.1",
     f"the job's own slime 0.3.1 ({JOB}; none declared with --framework or importable here)"),
    (Installed(framework="slime", version="0.4.0", source=JOB), "slime-main",
     f"the job's own slime 0.4.0: no schema of its own, judged by slime-main ({JOB}; none declared with --framework "
     "or importable here)"),
    # a source that only contains the flag's name is not a declaration
    (Installed(framework="slime", version="0.2.4", source="--framework-file"), "slime-v0.2.4", "installed slime 0.2.4"),
])
def test_choose_names_the_schema_and_the_whole_reason(installed, schema, why):
    chosen, reason = detect.choose(installed, "slime")
    assert (chosen.name, reason) == (schema, why)


@pytest.mark.parametrize(("recipe_framework", "schema"), [("slime", "slime-v0.2.4"), ("miles", "miles-main")])
def test_choose_without_a_framework_takes_the_recipe_frameworks_committed_schema(recipe_framework, schema):
    chosen, reason = detect.choose(Installed(framework=None), recipe_framework, "the job's launcher")
    assert (chosen.name, reason) == (schema, "neither SLIME nor Miles importable here: the committed schema for the "
                                             "job's launcher")
    assert detect.choose(Installed(framework=None), recipe_framework)[1].endswith("for the recipe's framework")


@pytest.mark.parametrize(("installed", "text"), [
    (Installed(framework=None),
     "neither SLIME nor Miles importable here (judged by the recipe's framework's committed schema)"),
    (Installed(framework="slime", version="0.3.1"), "slime 0.3.1 (importable)"),
    (Installed(framework="slime", main=True, source="--framework"), "slime main (--framework)"),
    (Installed(framework="miles", source="no package metadata"), "miles of unknown release (no package metadata)"),
])
def test_describe_says_what_is_judged_and_how_it_is_known(installed, text):
    assert installed.describe() == text


@pytest.mark.parametrize("text", ["slime", "slime=0.2.4", "sglang==0.5", "slime==", "Slime==main", "slime==.1"])
def test_a_declared_framework_that_is_not_one_is_refused_naming_what_is_allowed(text):
    with pytest.raises(ValueError) as exc:
        detect.parse_declared(text)
    assert str(exc.value) == (f"--framework={text!r}: expected slime==VERSION or miles==VERSION (e.g. slime==0.2.4, "
                              "slime==main)")


@pytest.mark.parametrize(("text", "installed"), [
    ("slime==0.2.4", Installed(framework="slime", version="0.2.4", source="--framework")),
    (" miles==main ", Installed(framework="miles", main=True, source="--framework")),
    ("slime==v0.3.1", Installed(framework="slime", version="0.3.1", source="--framework")),
])
def test_a_declared_framework_is_read(text, installed):
    assert detect.parse_declared(text) == installed


def test_resolve_prefers_what_is_declared_and_else_asks_this_machine(monkeypatch):
    found = Installed(framework="miles", version="0.1.0", source="package metadata")
    monkeypatch.setattr(detect, "collect_installed", lambda: found)
    declared = Installed(framework="slime", version="0.2.4", source="--framework")
    assert detect.resolve(declared) is declared
    assert detect.resolve(None) is found


# --- collect_installed and checkout_version: what this machine has ----------------------------------------------------

class _Spec:
    def __init__(self, places: list[str] | None) -> None:
        self.submodule_search_locations = places


def _machine(monkeypatch, specs: dict[str, _Spec], versions: dict[str, str], checkout=None):
    monkeypatch.setattr(detect.importlib.util, "find_spec", lambda name: specs.get(name))

    def version(name: str) -> str:
        if name not in versions:
            raise detect.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(detect.metadata, "version", version)
    seen: list[object] = []
    if checkout is not None:
        monkeypatch.setattr(detect, "checkout_version", lambda path: (seen.append(path), checkout)[1])
    return seen


def test_nothing_importable_is_no_framework(monkeypatch):
    _machine(monkeypatch, {}, {})
    assert detect.collect_installed() == Installed(framework=None)


def test_slime_is_looked_for_before_miles_and_read_from_its_metadata(monkeypatch):
    _machine(monkeypatch, {"slime": _Spec(["/x/slime"]), "miles": _Spec(["/x/miles"])},
             {"slime": "0.3.1", "miles": "0.1.0"})
    assert detect.collect_installed() == Installed(framework="slime", version="0.3.1", source="package metadata")


def test_miles_alone_is_found(monkeypatch):
    _machine(monkeypatch, {"miles": _Spec(["/x/miles"])}, {"miles": "0.1.0"})
    assert detect.collect_installed() == Installed(framework="miles", version="0.1.0", source="package metadata")


def test_a_module_without_metadata_and_without_a_folder_has_no_version(monkeypatch):
    _machine(monkeypatch, {"slime": _Spec(None)}, {})
    assert detect.collect_installed() == Installed(framework="slime", source="no package metadata")
    _machine(monkeypatch, {"slime": _Spec([])}, {})
    assert detect.collect_installed() == Installed(framework="slime", source="no package metadata")


@pytest.mark.parametrize(("checkout", "installed"), [
    (("0.3.1", "git tag v0.3.1"), Installed(framework="slime", version="0.3.1", source="git tag v0.3.1")),
    ((None, "git commit 624b824a8 (no release tag: judged as main)"),
     Installed(framework="slime", main=True, source="git commit 624b824a8 (no release tag: judged as main)")),
    ((None, "no package metadata and no git checkout"),
     Installed(framework="slime", source="no package metadata and no git checkout")),
])
def test_a_checkout_without_metadata_is_dated_by_git_from_its_first_folder(monkeypatch, checkout, installed):
    seen = _machine(monkeypatch, {"slime": _Spec(["/src/slime/slime", "/other/slime"])}, {}, checkout=checkout)
    assert detect.collect_installed() == installed
    assert [str(p) for p in seen] == ["/src/slime/slime"]


def _git(root, *args):
    import subprocess
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "slime"
    (root / "slime").mkdir(parents=True)
    (root / "slime" / "__init__.py").write_text("")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "c")
    return root


@pytest.mark.parametrize(("tag", "version", "how"), [
    ("v0.3.1", "0.3.1", "git tag v0.3.1"),
    ("0.2.4", "0.2.4", "git tag 0.2.4"),
    ("v0.2.0.post1", "0.2.0.post1", "git tag v0.2.0.post1"),
])
def test_a_release_tag_dates_a_checkout(tree, tag, version, how):
    _git(tree, "tag", tag)
    assert detect.checkout_version(tree / "slime") == (version, how)


@pytest.mark.parametrize("tag", [None, "nightly", "v1"])
def test_a_commit_without_a_release_tag_is_main(tree, tag):
    if tag:
        _git(tree, "tag", tag)
    version, how = detect.checkout_version(tree / "slime")
    assert version is None
    assert how.startswith("git commit ") and how.endswith(" (no release tag: judged as main)")
    assert len(how.split()[2]) == 9  # the short commit, 9 characters


def test_a_folder_that_is_no_checkout_says_so(tmp_path):
    (tmp_path / "slime").mkdir()
    assert detect.checkout_version(tmp_path / "slime") == (None, "no package metadata and no git checkout")


def test_no_git_in_the_image_is_said(monkeypatch, tmp_path):
    def no_git(*_a, **_k):
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(detect.subproc, "run", no_git)
    assert detect.checkout_version(tmp_path) == (None, "no package metadata, and git could not run: No such file or "
                                                       "directory")


def test_the_short_commit_is_nine_hex_characters(tree):
    import re

    how = detect.checkout_version(tree / "slime")[1]
    assert re.fullmatch(r"git commit [0-9a-f]{9} \(no release tag: judged as main\)", how), how


class _Git:
    """git's answers in order, and every call: argv and the time allowed."""

    def __init__(self, *answers: tuple[int, str]) -> None:
        self.answers, self.calls = list(answers), []

    def __call__(self, argv, timeout_s=None, **_):
        import types

        self.calls.append((argv, timeout_s))
        code, out = self.answers.pop(0)
        return types.SimpleNamespace(returncode=code, stdout=out, stderr="")


@pytest.mark.parametrize(("head", "how"), [
    ((0, "624b824a8\n"), "git commit 624b824a8 (no release tag: judged as main)"),
    ((0, "  \n"), "no package metadata and no git checkout"),  # git answered nothing
    ((128, "624b824a8\n"), "no package metadata and no git checkout"),  # git failed, whatever it printed
])
def test_git_is_asked_for_the_tag_then_the_commit_each_within_the_time_given(monkeypatch, tmp_path, head, how):
    git = _Git((128, ""), head)
    monkeypatch.setattr(detect.subproc, "run", git)
    assert detect.checkout_version(tmp_path / "slime", timeout_s=3.5) == (None, how)
    root = str(tmp_path)
    assert git.calls == [(["git", "-C", root, "describe", "--tags", "--exact-match"], 3.5),
                         (["git", "-C", root, "rev-parse", "--short=9", "HEAD"], 3.5)]


def test_git_gets_ten_seconds_by_default(monkeypatch, tmp_path):
    git = _Git((0, "v0.3.1\n"))
    monkeypatch.setattr(detect.subproc, "run", git)
    assert detect.checkout_version(tmp_path / "slime") == ("0.3.1", "git tag v0.3.1")
    assert [t for _, t in git.calls] == [10.0]
