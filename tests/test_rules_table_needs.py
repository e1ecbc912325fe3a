"""Rule table for what a captured script needed and did not get (rlcheck.job.needs): the variables it stopped for
(bash's own messages, the script's, a Python KeyError, else the failing line or what the script itself requires), the
arguments it wanted, the --job-env sentence, and one finding per stand-in, helper, program and launcher call."""

from __future__ import annotations

import shlex

import pytest

from rlcheck.job import needs, recorder

# --- missing_variables: named by a message ---------------------------------------------------------------------------

@pytest.mark.parametrize(("output", "names"), [
    (["run.sh: line 3: MASTER_ADDR: parameter null or not set"], ["MASTER_ADDR"]),
    (["run.sh: line 3: MASTER_ADDR: parameter not set"], ["MASTER_ADDR"]),
    (["run.sh: line 3: MASTER_ADDR: unbound variable"], ["MASTER_ADDR"]),
    (["MASTER_ADDR: unbound variable"], ["MASTER_ADDR"]),  # at the start of the line
    (["x:MASTER_ADDR: unbound variable"], ["MASTER_ADDR"]),
    (["x-MASTER_ADDR: unbound variable"], []),  # after a character bash's message never puts there
    (["MASTER_ADDR: is unbound"], []),
    (["run.sh: line 3: 1: unbound variable"], []),  # a positional argument is no variable
    (["A: unbound variable", "B: parameter not set", "A: unbound variable"], ["A", "B"]),
])
def test_bash_names_the_unset_variable(output, names):
    assert needs.missing_variables("echo $A $B $MASTER_ADDR", output, None) == names


@pytest.mark.parametrize(("script", "output", "names"), [
    ('X="${MODEL_DIR:?set MODEL_DIR first}"', ["run.sh: line 1: MODEL_DIR: set MODEL_DIR first"], ["MODEL_DIR"]),
    ('X="${MODEL_DIR?where}"', ["run.sh: line 1: MODEL_DIR: where"], ["MODEL_DIR"]),
    ('X="${MODEL_DIR:-/m}"', ["run.sh: line 1: MODEL_DIR: where"], []),  # not required: a default
    ('X="${B:?b}" Y="${A:?a}"', ["A: a", "B: b"], ["A", "B"]),  # in name order
    ('X="${MODEL_DIR:?m}"', ["MODEL_DIR:x"], []),
])
def test_a_required_variables_custom_message_names_it(script, output, names):
    assert needs.missing_variables(script, output, None) == names


GUARDS = ': "${ROOT:?checkout}"\n: "${IMAGE:?image}"\n: "${MOUNTS?mounts}"\nX=${OPT:-1}\n'


@pytest.mark.parametrize(("extra", "set_at_exit", "names"), [
    ("", [], ["ROOT", "IMAGE", "MOUNTS"]),  # the guards it never reached are named with the one it stopped on
    ("", None, ["ROOT"]),  # not a bash run (no variables seen at exit): only what it said
    ("", ["IMAGE"], ["ROOT", "MOUNTS"]),  # one given: not named
    ("IMAGE=$(pick)\n", [], ["ROOT", "MOUNTS"]),  # the script sets it itself
    ("export IMAGE=x\n", [], ["ROOT", "MOUNTS"]),
    ("f; IMAGE+=y\n", [], ["ROOT", "MOUNTS"]),
    ("if x; then IMAGE=1; fi\n", [], ["ROOT", "MOUNTS"]),
    ("  declare -r -x IMAGE=1\n", [], ["ROOT", "MOUNTS"]),
    ("(IMAGE=1)\n", [], ["ROOT", "MOUNTS"]),
    ("a[0]=1; IMAGE[1]=x\n", [], ["ROOT", "MOUNTS"]),
    ("for IMAGE in a b; do :; done\n", [], ["ROOT", "MOUNTS"]),
    ("read -r X IMAGE < f\n", [], ["ROOT", "MOUNTS"]),
    ("MY_IMAGE=x\nIMAGES=y\necho IMAGE=z\n", [], ["ROOT", "IMAGE", "MOUNTS"]),  # other names; an echo's text
    ("fortune IMAGE in\n", [], ["ROOT", "IMAGE", "MOUNTS"]),
    ('IMAGE="${IMAGE:-}"\n', [], ["ROOT", "IMAGE", "MOUNTS"]),  # a default for the caller's value: still theirs
    ("IMAGE=$IMAGE/x\n", [], ["ROOT", "IMAGE", "MOUNTS"]),
    ('IMAGE="${IMAGE:-}"\nIMAGE=$(pick)\n', [], ["ROOT", "MOUNTS"]),  # and then computed: the script's
])
def test_every_guard_the_script_did_not_reach_is_named_with_the_first(extra, set_at_exit, names):
    output = ["launch.sh: line 1: ROOT: checkout"]
    assert needs.missing_variables(GUARDS + extra, output, set_at_exit) == names


@pytest.mark.parametrize(("output", "set_at_exit", "names"), [
    (["MASTER_ADDR is not set. Please set it"], [], ["MASTER_ADDR"]),
    (["master_addr is NOT SET"], [], ["MASTER_ADDR"]),  # case does not matter
    (["Please export MASTER_ADDR"], [], ["MASTER_ADDR"]),
    (["please set   MASTER_ADDR to the head"], [], ["MASTER_ADDR"]),
    (["MASTER_ADDR is not set. Please set it"], ["MASTER_ADDR"], []),  # it was set when the script exited
    (["+ echo 'MASTER_ADDR is not set'"], [], []),  # bash's trace of the line, not the message
    (["MASTER_ADDR was set. But not set"], [], []),  # the sentence ended between them
    (["MASTER_ADDRESS is not set"], [], []),  # another word
    (["reset MASTER_ADDR"], [], []),
])
def test_the_scripts_own_message_names_the_variable(output, set_at_exit, names):
    assert needs.missing_variables("echo $MASTER_ADDR", output, set_at_exit) == names


@pytest.mark.parametrize(("script", "output", "names"), [
    ('import os\nos.environ["WANDB_KEY"]', ["KeyError: 'WANDB_KEY'"], ["WANDB_KEY"]),
    ('import os\nos.environ["WANDB_KEY"]', ['  KeyError: "WANDB_KEY"  '], ["WANDB_KEY"]),
    ('os.environ.get("WANDB_KEY")', ["KeyError: 'WANDB_KEY'"], ["WANDB_KEY"]),
    ("os.getenv('WANDB_KEY')", ["KeyError: 'WANDB_KEY'"], ["WANDB_KEY"]),
    ("os.environ[ 'WANDB_KEY' ]", ["KeyError: 'WANDB_KEY'"], ["WANDB_KEY"]),
    ('d = {}\nd["WANDB_KEY"]', ["KeyError: 'WANDB_KEY'"], []),  # a dict's key, not the environment's
    ('os.environ["WANDB_KEY"]', ["KeyError: 'WANDB_KEY' x"], []),
    ('os.environ["WANDB_KEY"]', ["raise KeyError: 'WANDB_KEY'"], []),
])
def test_a_python_launchers_key_error_names_a_variable_it_reads(script, output, names):
    assert needs.missing_variables(script, output, None) == names


# --- missing_variables: no message -----------------------------------------------------------------------------------

SCRIPT = """#!/bin/bash
# --wandb-key ${COMMENTED}
MODEL=${MODEL_DIR}/ckpt
awk '{print $NF}' /x
test -z "$HEAD_IP" && exit 1
ls ${DATA_DIR}/$RLCHECK_X $HOME $BASH_VERSION
[ -z ${PORT} ] && exit 1
"""


@pytest.mark.parametrize(("output", "set_at_exit", "names"), [
    ([], None, []),  # nothing known of what was set: no guess
    ([], [], ["HEAD_IP", "PORT"]),  # what the script itself tests for, in the order it reads them
    ([], ["HEAD_IP"], ["PORT"]),
    (["run.sh: line 3: /ckpt: No such file or directory"], [], ["MODEL_DIR"]),  # the failing line's variables
    (["run.sh: line 6: /x: No such file or directory"], [], ["DATA_DIR"]),  # not RLCHECK_, the shell's or BASH
    (["run.sh: line 4: /x: No such file"], [], []),  # the line reads no variable: none is the cause
    (["line 3: a", "run.sh: line 6: b"], ["DATA_DIR"], []),  # the last failing line, whose variable was set
    (["run.sh: line 8: x"], [], ["HEAD_IP", "PORT"]),  # past the script's last line: what it requires
    (["run.sh: line 0: x"], [], ["HEAD_IP", "PORT"]),
    (["run.sh: line 1: x"], [], []),  # the first line (the shebang) reads no variable
    (["run.sh: line 7: x"], [], ["PORT"]),  # the last line
    (["run.sh: line 2: x"], [], []),  # a comment line expands nothing
])
def test_without_a_message_the_failing_line_or_what_the_script_requires(output, set_at_exit, names):
    assert needs.missing_variables(SCRIPT, output, set_at_exit) == names


def test_a_required_variable_unset_at_exit_is_named_without_a_message():
    assert needs.missing_variables('echo "${TOKEN:?}" $OTHER', ["exit 1"], []) == ["TOKEN"]
    assert needs.missing_variables('echo "${TOKEN:?}" $OTHER', ["exit 1"], ["TOKEN"]) == []


@pytest.mark.parametrize(("text", "names"), [
    ("echo $A ${B} ${C:-x} $A", ["A", "B", "C"]),
    ("echo '$A' \"$B\"", ["B"]),
    ("  # $A\necho $B", ["B"]),
    ("x = os.environ['K']\n# os.getenv('J')", ["K"]),
    ("echo $1 $9x ${", []),
    ("echo $A\necho $B", ["A", "B"]),
    # a single-quoted part is no expansion, and what follows it is no name after a $ ($'\t'X: ANSI-C quoting)
    ("echo $'\\t'TAB", []),
])
def test_references_are_what_the_text_expands(text, names):
    assert needs._references(text) == names


# --- wants_arguments and how_to_pass ---------------------------------------------------------------------------------

ADVICE = ("pass them after --: rlcheck job capture SCRIPT -- ARG... (with --job: --job-arg ARG, once per argument, "
          "in order)")


@pytest.mark.parametrize(("script", "output", "given", "text"), [
    ('M="${1:?model}"', ["run.sh: line 1: 1: model"], [], ""),  # bash's custom message is not one it knows
    ('M="${1:?}"', ["run.sh: line 1: 1: parameter null or not set"], [],
     f"the script stops for want of its own arguments: {ADVICE}"),
    ('M="${1?}"', ["run.sh: line 1: 1: parameter not set"], [], f"the script stops for want of its own arguments: "
                                                                  f"{ADVICE}"),
    ("set -u; M=$2", ["run.sh: line 1: 2: unbound variable"], [], f"the script stops for want of its own arguments: "
                                                                     f"{ADVICE}"),
    ('[ $# -lt 1 ] && echo "Usage: run.sh MODEL" && exit 1', ["Usage: run.sh MODEL"], [],
     f"the script stops for want of its own arguments (Usage: run.sh MODEL): {ADVICE}"),
    ('for a in "$@"; do :; done', ["+ echo usage: x", "  usage: run.sh A B  "], [],
     f"the script stops for want of its own arguments (usage: run.sh A B): {ADVICE}"),
    ('M="${1:?}"', ["+ echo usage: x"], [], f"the script stops for want of its own arguments: {ADVICE}"),
    ('M=${*}', ["error: usage: run.sh A"], [], f"the script stops for want of its own arguments (error: usage: run.sh "
                                               f"A): {ADVICE}"),
    ('M="${1:?}"', ["run.sh: line 1: 1: parameter null or not set"], ["a"], ""),  # arguments were given
    ("echo '$1'", ["usage: x"], [], ""),  # single-quoted: reads none
    ("# $1\necho hi", ["usage: x"], [], ""),  # a comment
    ("  # $1\necho hi", ["usage: x"], [], ""),  # an indented one
    ("echo $'x'1", ["usage: x"], [], ""),  # ANSI-C quoting, then a literal 1
    ("echo $1", ["--disable-usage-stats"], [], ""),
    ("echo $1", ["all fine"], [], ""),
    ("echo $0", ["usage: x"], [], ""),
    ("echo $1", ["run.sh: line 1: 12: unbound variable"], [], ""),
])
def test_a_script_that_wants_its_own_arguments(script, output, given, text):
    assert needs.wants_arguments(script, output, given) == text


@pytest.mark.parametrize(("names", "text"), [
    ([], ""),
    (["A"], "the script stops for want of A (unset when it exited): pass --job-env A=..."),
    (["A", "B"], "the script stops for want of A, B (unset when it exited): pass --job-env A=... --job-env B=..."),
])
def test_how_to_pass_the_variables(names, text):
    assert needs.how_to_pass(names) == text


# --- the findings on what ran ----------------------------------------------------------------------------------------

POLL = "import ray; print(int(ray.cluster_resources().get('GPU', 0)))"
LONG = "x" * 200


def test_substitution_findings_one_per_command_cut_at_120():
    calls = [("python3", ("-c", "print(1)")), ("python3", ("-c", "print(1)")), ("hostname", ()), ("echo", (LONG,))]
    tail = ("ran where the script reads its output (a command substitution or pipe): rlcheck's stand-in printed "
            "nothing there, so what it would add to the launch is missing")
    assert needs.substitution_findings(calls) == [f"`python3 -c 'print(1)'` {tail}", f"`hostname` {tail}",
                                                  f"`{('echo ' + LONG)[:120]}` {tail}"]


def test_helper_findings_only_for_helpers_cut_at_160():
    calls = [("helper", ("model_args_utils.py", "qwen3-4B")), ("program", ("x.py",)),
             ("helper", ("model_args_utils.py", "qwen3-4B")), ("helper", (LONG,))]
    tail = "ran for real (a pure model-argument helper of the framework): its output is in the launch"
    assert needs.helper_findings(calls) == [f"`python3 model_args_utils.py qwen3-4B` {tail}",
                                            f"`{('python3 ' + LONG)[:160]}` {tail}"]


def test_cluster_findings_only_for_a_poll_of_rays_gpus():
    calls = [("python3", ("-c", POLL)), ("python", ("-c", POLL)), ("python3", ("-c", "print(1)")),
             ("bash", ("-c", POLL)), ("python3", ("-c", POLL))]
    tail = (f"asks Ray how many GPUs have joined: rlcheck's stand-in answered {recorder.CLUSTER_GPUS} (every node up), "
            "so the script's wait for its cluster went on to the launch")
    assert needs.cluster_findings(calls) == [f"`{shlex.join(('python3', '-c', POLL))}` {tail}",
                                             f"`{shlex.join(('python', '-c', POLL))}` {tail}"]


def test_cluster_findings_cut_at_120():
    calls = [("python3", ("-c", POLL + "#" + LONG))]
    line = shlex.join(("python3", "-c", POLL + "#" + LONG))[:120]
    assert needs.cluster_findings(calls)[0].startswith(f"`{line}` asks Ray")


def test_program_errors_are_the_failed_programs_last_lines():
    calls = [("program-failed", ("ModuleNotFoundError: no torch",)), ("program-failed", ()), ("program", ("ok",)),
             ("program-failed", ("SyntaxError", "more"))]
    assert needs.program_errors(calls) == ["ModuleNotFoundError: no torch", "SyntaxError"]


def test_program_findings_one_per_program_cut_at_120():
    calls = [("program", ("-c", "print(1)")), ("program-failed", ("x",)), ("program", ("-c", "print(1)")),
             ("program", (LONG,))]
    tail = ("ran for real (a Python program of the standard library only, whose output the script reads): its output "
            "is in the launch")
    assert needs.program_findings(calls) == [f"`python3 -c 'print(1)'` {tail}", f"`{('python3 ' + LONG)[:120]}` {tail}"]


def test_launcher_findings_one_per_launcher_cut_at_160():
    calls = [("launcher", ("run.py", "run", "qwen3-4B")), ("helper", ("h.py",)), ("launcher", ("run.py", "run",
                                                                                               "qwen3-4B")),
             ("launcher", (LONG,))]
    tail = ("ran for real under rlcheck's stub of the frameworks' launch helpers (a Python launcher the script calls): "
            "the launch it makes is the one judged")
    assert needs.launcher_findings(calls) == [f"`python3 run.py run qwen3-4B` {tail}",
                                              f"`{('python3 ' + LONG)[:160]}` {tail}"]
