"""Surviving mutants that are equivalent: the mutated code behaves the same on every input, so no test can
turn it red. Each entry is the mutant's name (as `mutmut results` lists it) and why it is equivalent.

A name is the function plus mutmut's running number within it: an edit to that function renumbers its
mutants, so re-check the entries of a function whenever it changes (`mutmut show NAME` prints the diff).
"""

from __future__ import annotations

_WORDS = ("the True / False / None test in slime_metrics._value, any of its words changed: float() of each of "
          "those words raises ValueError, whose handler returns the same text, so the test changes no value")

_HS = "rlcheck.scan_engines.xǁHyperscanFinderǁanchors__mutmut_"

_STRICT = "{}; zip's strict (True, False, None or absent) only matters when the lengths differ, which they cannot"

EQUIVALENT: dict[str, str] = {
    # rlcheck/job/to_recipe.py: a default given twice
    **{f"rlcheck.job.to_recipe.x__placement__mutmut_{n}": "flags.int(FLAG, D) or D without its D argument: an absent "
       "flag reads None, and the `or D` after it gives the same D" for n in (26, 35, 50)},
    **{f"rlcheck.job.to_recipe.x_model_of__mutmut_{n}": "flags.int(FLAG, 1) or 1 without its 1: None, then the same 1 "
       "from the `or`" for n in (66, 68)},
    **{f"rlcheck.job.to_recipe.x_read__mutmut_{n}": "flags.str('--hf-checkpoint', '') or '' without its '': None, "
       "then the same '' from the `or`" for n in (67, 69)},
    **{f"rlcheck.job.to_recipe.x_model_of__mutmut_{n}": _STRICT.format("the given dims named with their flags")
       for n in (46, 49, 50)},
    # rlcheck/probes/recipe/memory.py (MTP, the LoRA bounds) and memory_kv.py (the draft, the precision)
    **{f"rlcheck.probes.recipe.memory.x__mtp__mutmut_{n}": "world // x -> world / x: estimate_stage_memory refuses a "
       "world that TP x PP or EP x ETP x PP does not divide before it counts MTP, so the quotient is whole" for n in
       (17, 19)},
    "rlcheck.probes.recipe.memory.x__mtp__mutmut_36":
        "layer bytes x in_flight -> / in_flight: the last stage holds one micro-batch in flight (min(PP - (PP - 1), "
        "micro-batches) = 1), and x 1 is / 1",
    **{f"rlcheck.probes.recipe.memory.x_{f}__mutmut_{n}": "1e9 -> 1000000001.0 in a two-decimal billions figure: the "
       "quotients differ by one part in 1e9, far below the two decimals shown (they render alike unless a count sat "
       "within a billionth of a rounding edge)" for f, n in
       (("_stage_details", 48), ("evaluate_stage_memory", 45))},
    "rlcheck.probes.recipe.memory_kv.x__weight_bytes__mutmut_22":
        "rsplit('/', 1)[-1] -> rsplit('/', 2)[-1]: the last part is the same however many splits are made",
    "rlcheck.probes.recipe.memory_kv.x_estimate_kv_pool__mutmut_101":
        "max-total-tokens absent -> 'XXXX' instead of '': neither is digits, so no cap either way",
    "rlcheck.probes.recipe.memory_kv.x_estimate_kv_pool__mutmut_73":
        "the cell widened also without a draft: x (1 + 0 / layers) = x 1.0, and int() of a whole byte count is itself",
    "rlcheck.probes.recipe.memory_kv.x_estimate_kv_pool__mutmut_93":
        "int(x // cell) -> int(x / cell) under max(0, ...): both truncate a positive quotient to the same whole "
        "number, and a negative one to at most 0, which max lifts to 0",
    "rlcheck.probes.recipe.memory_kv.x_evaluate_kv_pool__mutmut_108":
        "draft_weights=False -> None: only tested for truth",
    "rlcheck.probes.recipe.memory_kv.x_evaluate_kv_pool__mutmut_150":
        "_kv_remedy(pool, profile) -> (pool, None): _kv_remedy reads the pool alone",
    # rlcheck/job/recorder.py: the record line, the failed program's last words, the package query's defaults
    **{f"rlcheck.job.recorder.x_main__mutmut_{n}": "the record line's codec or error handler (utf-8 / UTF-8 / the "
       "locale's, 'replace' / None / another name): the line is json.dumps output, ASCII only, so every "
       "ASCII-compatible codec writes the same bytes and no error handler is ever asked"
       for n in (137, 138, 141, 148, 149, 150)},
    **{f"rlcheck.job.recorder.x_main__mutmut_{n}": "bytes.decode('utf-8') -> decode() or decode('UTF-8'): utf-8 is "
       "decode's default and codec names are case-insensitive" for n in (112, 116)},
    **{f"rlcheck.job.recorder.x_package_query__mutmut_{n}": "a default for a variable the sandbox always sets "
       "(RLCHECK_BASH_ENV, RLCHECK_HOST_PATH, PATH) changed to None, 'XX...XX' or another spelling of a folder that "
       "does not exist: a relative PATH entry is dropped (isabs) and a missing folder finds no pip, so the answer is "
       "the same None" for n in (25, 26, 29, 31, 34, 36, 38, 41)},
    **{f"rlcheck.probes.recipe.memory_params.x__freq_length__mutmut_{n}": "_freq_length's own words for a pattern "
       "that is not a list pattern (None, another spelling): moe_layer_flags catches that ValueError and raises its "
       "own message from None, so these words are never shown" for n in (31, 32, 33)},
    # rlcheck/job/argv_model.py
    "rlcheck.job.argv_model.x__dp_without_dp_attention__mutmut_3":
        "_over_one(value, flags) -> _over_one(value, None): _over_one reads the value alone (its flags parameter is "
        "the Applies signature's), so None changes nothing",
    **{f"rlcheck.job.argv_model.x__not__mutmut_{n}": "_not builds its predicate when the term tables are built, at "
       "import, before a test switches a mutant on: the tables hold the unmutated lambda (every table row with "
       "--train-backend and --sglang-speculative-algorithm pins what it decides)" for n in (1, 2, 3)},
    # rlcheck/preflight/job_inputs.py, rlcheck/recipes/deltas.py
    "rlcheck.preflight.job_inputs.x_inputs_for_job__mutmut_13":
        "_unreadable(..., launch=False) -> launch=None: the flag is only tested for truth, and None is false as False",
    "rlcheck.recipes.deltas.x_node_shape__mutmut_3":
        "per_node > width -> >=: at per_node == width the node count is actor GPUs // width = the same nodes and the "
        "same GPUs per node, and the GPUs divide whole nodes, so nothing is refused either",
    # rlcheck/hardware.py
    **{f"rlcheck.hardware.xǁHardwareProfileǁfloor_measured__mutmut_{n}": "the default of a floor with no provenance "
       "entry changed from 'measured' to None / another word: only 'public' makes a floor WARN, and no default is "
       "'public', so every floor without an entry still FAILs below it" for n in (2, 4, 5, 6)},
    "rlcheck.hardware.x__profile_from_toml__mutmut_5": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    **{f"rlcheck.hardware.x__profile_from_toml__mutmut_{n}": "raw.get(...) of gpu_name_patterns / instance_types "
       "without its () default: both are required fields, so check_fields refuses a file without them before the "
       "default could be read" for n in (41, 43, 50, 52)},
    # rlcheck/recipes/glm.py
    "rlcheck.recipes.glm.x_stage_sizes__mutmut_38":
        "the stage size shared when no stage is left 0 -> 1: no stage is left only when first and last are both given "
        "on PP 2, whose split [first, last] has no middle stage to take it",
    "rlcheck.recipes.glm.x_glm_recipe__mutmut_44": "Reward(rm_type='deepscaler') left out: Reward's default rm_type "
                                                   "is deepscaler",
    "rlcheck.recipes.glm.x_glm_recipe__mutmut_67": "max_tokens_per_gpu=8192 left out: Rollout's default is 8192",
    # rlcheck/preflight/baseline.py
    **{f"rlcheck.preflight.baseline.x__unhealthy__mutmut_{n}": "a verdict without check_id read as None / 'XXXX' "
       "instead of '': none of them starts with gpu_ or cluster_node_, so the verdict is left out alike"
       for n in (23, 25, 28)},
    **{f"rlcheck.preflight.baseline.x_figures_from_report__mutmut_{n}": "a verdict without details / summary read as "
       "None / 'XXXX' instead of '': neither matches a GEMM line or the bus-bandwidth text, so no figure is read alike"
       for n in (38, 40, 43, 55, 57, 60)},
    "rlcheck.preflight.baseline.x_check_bound__mutmut_7": "floor <= 0 -> floor < 0: a profile floor is never 0 "
                                                          "(Thresholds refuses a floor <= 0)",
    "rlcheck.preflight.baseline.x_load__mutmut_5": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.preflight.baseline.x_read_report__mutmut_5": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    **{f"rlcheck.preflight.baseline.x_read_report__mutmut_{n}": 'a report without "hardware" read as None (default '
       "None or left out) instead of {}: the profile is '' either way, from the isinstance(hardware, dict) test's "
       "else for None, from {}.get('profile') or '' for {}" for n in (11, 13)},
    # rlcheck/recipes/cases.py: a keyword left out whose value is the dataclass's own default
    **{f"rlcheck.recipes.cases.x_{name}__mutmut_{n}": f"{what} left out: that is the field's default"
       for name, n, what in (("qwen3_30b_a3b_disaggregated", 18, "reward=Reward(rm_type='deepscaler')"),
                             ("qwen3_30b_a3b_disaggregated", 35, "Parallelism's etp=1"),
                             ("qwen3_30b_a3b_disaggregated", 52, "Rollout's max_response_len=8192"),
                             ("qwen3_4b_colocated", 17, "reward=Reward(rm_type='deepscaler')"),
                             ("qwen3_4b_colocated", 35, "Rollout's max_response_len=8192"),
                             ("qwen3_4b_colocated", 36, "Rollout's max_tokens_per_gpu=8192"),
                             ("qwen3_4b_colocated", 50, "Placement's rollout_gpus_per_engine=1"))},
    # rlcheck/job/typed.py
    "rlcheck.job.typed.x_load_yaml_all__mutmut_9":
        "yaml.parse(text, Loader=SafeLoader) -> yaml.parse(text): the loaders share one scanner and parser, so the "
        "events (and the aliases among them) are the same; only constructing objects differs, which parse never does",
    "rlcheck.job.typed.x_strings__mutmut_11": "get(..., default=None) -> get(...): get's default is None",
    # rlcheck/job/confine.py
    "rlcheck.job.confine.x_caller_homes__mutmut_19": 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec',
    "rlcheck.job.confine.x_caller_homes__mutmut_22": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    # rlcheck/job/sandbox.py (run's numbers as run() reads since --job-show and RLCHECK_HOST_PATH)
    **{f"rlcheck.job.sandbox.x_run__mutmut_{n}": "the encoding of the empty file changed: an empty text is no bytes "
       "in any encoding" for n in (20, 22, 28)},
    **{f"rlcheck.job.sandbox.x_run__mutmut_{n}": "the call record's file name changed: the fakes are handed the "
       "same path (RLCHECK_RECORD) that is read back, inside the run's own private directory" for n in (38, 39)},
    **{f"rlcheck.job.sandbox.x_run__mutmut_{n}": "RLCHECK_RECORD_CAP not handed to the fakes: the recorder's "
       "default cap (recorder._DEFAULT_CAP, 4 MiB) is the same bounded.RECORD_CAP_BYTES" for n in (121, 122)},
    **{f"rlcheck.job.sandbox.x__shims__mutmut_{n}": why for n, why in (
        (8, 'codec "utf-8" -> "UTF-8": codec names are case-insensitive'),
        (19, 'codec "utf-8" -> "UTF-8": codec names are case-insensitive'),
        *((n, "bash_env's encoding changed: _BASH_ENV is ASCII, the same bytes in any ASCII-compatible encoding")
          for n in (12, 14)))},
    "rlcheck.job.sandbox.x_run__mutmut_53":
        "the script left out of the files kept in view: the start directory always holds the script (start_dir: the "
        "caller's directory holding it, its checkout's root or its own directory) and is kept itself",
    # rlcheck/job/capture.py
    "rlcheck.job.capture.x__submit_line__mutmut_20":
        "range(len(words) - 2) -> range(len(words) + 2): a start past len - 3 slices fewer than three words, never "
        "equal to ray job submit",
    # rlcheck/job/recorder.py
    **{f"rlcheck.job.recorder.x_{fn}__mutmut_{n}": why for fn, n, why in (
        ("is_launcher", 35, 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec'),
        ("is_launcher", 42, 'codec "utf-8" -> "UTF-8": codec names are case-insensitive'),
        ("main", 4, 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec'),
        ("main", 8, 'codec "utf-8" -> "UTF-8": codec names are case-insensitive'),
        ("main", 106, 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec'),
        ("main", 110, 'codec "utf-8" -> "UTF-8": codec names are case-insensitive'),
        *(("main", n, "the record's encoding or error handler changed: every line written is json.dumps output "
                      "(ensure_ascii), ASCII only, the same bytes in any ASCII-compatible encoding with no character "
                      "to handle") for n in (131, 132, 135, 136, 142, 143, 144)))},
    # rlcheck/job/bounded.py
    "rlcheck.job.bounded.x__decode__mutmut_3": 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec',
    "rlcheck.job.bounded.x__decode__mutmut_7": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.job.bounded.x_read_capped__mutmut_17":
        "read(cap + 1) -> read(cap + 2): one byte past the cap tells 'more' either way, and only the first cap bytes "
        "are returned",
    # rlcheck/plugin/report.py
    "rlcheck.plugin.report.x_kind_of__mutmut_8": 'split("/", 1)[0] -> split("/")[0]: the first part is the same',
    "rlcheck.plugin.report.x_kind_of__mutmut_11": 'split("/", 1)[0] -> split("/", 2)[0]: the first part is the same',
    "rlcheck.plugin.report.x_verdict_id__mutmut_5":
        'rsplit("::", 1)[-1] -> rsplit("::")[-1]: the last part is the same',
    "rlcheck.plugin.report.x_verdict_id__mutmut_8":
        'rsplit("::", 1)[-1] -> rsplit("::", 2)[-1]: the last part is the same',
    "rlcheck.plugin.report.x__skip_at_the_test__mutmut_6":
        "Path(invocation dir, where) -> Path(where): pytest's skip location is the raising frame's co_filename, "
        "which Python (3.4 on) makes absolute for every imported module, and joining an absolute path drops the "
        "directory before it",
    "rlcheck.plugin.report.xǁVerdictCollectorǁ__init____mutmut_5":
        "paths = () -> None: paths is only read by the summary, which runs only after sessionfinish set it "
        "together with the decision",
    # rlcheck/plugin/junit.py
    **{f"rlcheck.plugin.junit.x__verdicts__mutmut_{n}": "a property's name defaulting to None or 'XXXX' instead of "
       "'': the name is only compared with the three rlcheck_* keys, which none of the three equals"
       for n in (7, 9, 12)},
    "rlcheck.plugin.junit.x__case_properties_to_suite__mutmut_1":
        "moved starts None instead of False: it stays None only for a suite without a testcase, and its one caller "
        "(to_schema) reads it as `moved or changed`, where None and False both give `changed`",
    # rlcheck/report.py: report.json and the history copy are ASCII
    **{f"rlcheck.report.x_{f}__mutmut_{n}": "report.json's / the history copy's encoding 'utf-8' -> the locale's "
       "(None, absent): the text is json.dumps output with ensure_ascii, ASCII only, and every locale codec Python "
       "runs under is ASCII-compatible (an ASCII locale too: test_rules_table_report_files_are_utf_8_whatever_the_"
       "locale), so the bytes are the same" for f, n in (("write", 17), ("write", 19), ("keep", 53), ("keep", 55))},
    **{f"rlcheck.report.x_{f}__mutmut_{n}": 'encoding "utf-8" -> "UTF-8": codec names are case-insensitive'
       for f, n in (("write", 28), ("write", 35), ("keep", 59))},
    # rlcheck/scan.py
    "rlcheck.scan.x__excerpt__mutmut_2":
        "> SHOWN_BYTES -> >=: a line of exactly SHOWN_BYTES gives lo = start, hi = end either way: the whole line",
    "rlcheck.scan.x__excerpt__mutmut_21": 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec',
    "rlcheck.scan.x__excerpt__mutmut_25": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.scan.x__excerpt__mutmut_42": 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec',
    "rlcheck.scan.x__excerpt__mutmut_46": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.scan.xǁMatcherǁmatch_line__mutmut_6": 'encode("utf-8", ...) -> encode(...): UTF-8 is the default',
    "rlcheck.scan.xǁMatcherǁmatch_line__mutmut_9": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.scan.x__blocks__mutmut_20":
        'getattr(exc, "filled", 0) -> default None: _fill sets exc.filled on every read error it re-raises',
    "rlcheck.scan.x__blocks__mutmut_23":
        'getattr(exc, "filled", 0) -> no default: _fill sets exc.filled on every read error it re-raises',
    "rlcheck.scan.x__blocks__mutmut_26":
        'getattr(exc, "filled", 0) -> default 1: _fill sets exc.filled on every read error it re-raises',
    "rlcheck.scan.x__blocks__mutmut_32": "rfind(..., 0, end) -> rfind(..., None, end): None means from 0",
    "rlcheck.scan.x__fill__mutmut_12":
        "filled < len(view) -> <=: once full, readinto of an empty view returns 0 and the loop ends the same",
    "rlcheck.scan.x__scan_into__mutmut_4":
        "counted_to = 0 -> None: bytes.count(sub, None, start) counts from 0 just the same",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_1":
        "end - start <= PIECE_BYTES -> end + start: a short line taken the piecewise way is one piece: same ids",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_2":
        "<= PIECE_BYTES -> <: a line of exactly PIECE_BYTES taken piecewise is one piece: same ids",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_17":
        "cache lookup -> None: every set is named afresh (the same sorted ids); only the cache is lost",
    "rlcheck.scan.xǁMatcherǁ_ids_between__mutmut_18":
        "cache lookup by None: always a miss, every set is named afresh (the same sorted ids)",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_13":
        "rfind from pos -> from 0: pos is one past the previous line's newline, so the last newline before the "
        "anchor is the same one (or none: then start = pos both ways)",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_33":
        "end < 0 -> end <= 0: find from the anchor gives 0 only for an anchor on a newline at offset 0, and an "
        "anchor is a matched character of a one-line signature",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_34": "end < 0 -> end < 1: as hits__mutmut_33",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_8":
        "continue -> break on anchor < pos: every engine gives at most one anchor per line, in order, so no "
        "anchor falls before the end of the line just handled",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_41":
        "end > start -> end >= start before the CRLF test: end == start is an empty line, and no anchor lies on "
        "one (every engine anchors on a matched character, or just past it, of a signature that matches at least "
        "one character of one line)",
    "rlcheck.scan.xǁMatcherǁhits__mutmut_54":
        "pos = end + 1 -> end - 1: the next rfind still finds the newline at end (start is the same), and the "
        "next anchor lies past it",
    # rlcheck/probes/recipe/memory_params.py
    **{f"rlcheck.probes.recipe.memory_params.x__freq_list__mutmut_{n}":
       "the message of _freq_list's ValueError is never shown: moe_layer_flags catches it and raises its own, "
       "which names the pattern and the forms allowed" for n in (38, 39, 40)},
    # rlcheck/catalog.py
    **{f"rlcheck.catalog.x__entry__mutmut_{n}":
       "the default of a required field's get (signatures, examples, near_misses) is never used: check_fields "
       "has refused an entry without it" for n in (35, 37, 44, 46, 53, 55)},
    **{f"rlcheck.catalog.xǁAffectedǁcontains__mutmut_{n}":
       "contains(..., prereleases=True) -> None / left out: packaging 26 (installed) accepts a pre-release of a "
       "single version by default; equivalent here, not under older packaging, which is why the code says True"
       for n in (2, 4)},
    "rlcheck.catalog.x__tables__mutmut_5": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive (even '
        "the error a non-UTF-8 file gets names the codec 'utf-8')",
    **{f"rlcheck.catalog.x__compiled__mutmut_{n}": _STRICT.format("zip(files, doc['files'], strict=True): the "
       "record's file names were just compared equal to this text's, one for one") for n in (25, 28, 31)},
    "rlcheck.catalog.x_log_traits__mutmut_1":
        "seen_model = False -> None before the loop: the first line makes it `None or bool(...)`, a bool, and with "
        "no line at all None selects the same None as False in `frozenset() if seen_model else None`",
    "rlcheck.catalog.x_job_traits__mutmut_11":
        'value past the last token "" -> "XXXX": neither is "nsa" nor names a DSA spec',
    # rlcheck/process/wait.py, reach.py, subproc.py
    "rlcheck.process.wait.x_free_loopback_port__mutmut_4":
        "socket(AF_INET, SOCK_STREAM) -> socket(AF_INET): socket.socket's type -1 (its default) becomes SOCK_STREAM",
    **{f"rlcheck.process.wait.x_wait_http_ok__mutmut_{n}": "last = 'not tried' -> another text: never read, since "
       "every attempt either returns ok or sets last (HTTP status, HTTPError, URLError/OSError/TimeoutError) before "
       "the liveness and deadline returns, and any other exception leaves the wait" for n in (6, 7)},
    "rlcheck.process.reach.x_host_port__mutmut_7":
        "no scheme: '' -> 'XXXX': the scheme is only looked up in DEFAULT_PORTS (ray, http, https), where neither is",
    "rlcheck.process.reach.x_refused__mutmut_14":
        "exc.errno or 0 -> or 1: a missing errno is looked up in _DEFINITE (ECONNREFUSED, EHOSTUNREACH, ENETUNREACH), "
        "where neither 0 nor 1 (EPERM) is: '' either way",
    "rlcheck.process.subproc.x__text__mutmut_6": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.process.subproc.x_concurrently__mutmut_6":
        "max(len(calls), 1) -> max(len(calls), 2): the same for one call or more; with none, nothing is submitted and "
        "ThreadPoolExecutor starts no thread, so its size is never used",
    # rlcheck/reward/cli.py
    "rlcheck.reward.cli.x_add_arguments__mutmut_226":
        "--reward-key's default=None left out: argparse's default for an option is None already (and its help "
        "does not show %(default)s)",
    # rlcheck/reward/payload.py
    "rlcheck.reward.payload.x__prompt_messages__mutmut_8":
        'default prompt "" -> "XXXX": only the default\'s type is read (any string prompt counts 0 messages)',
    "rlcheck.reward.payload.x_parse_payload__mutmut_4":
        'codec "utf-8" -> "UTF-8": Python\'s codec names are case-insensitive',
    "rlcheck.reward.payload.x_read_body__mutmut_8":
        'header "content-length" -> "CONTENT-LENGTH": Starlette\'s Headers.get lowercases the key',
    "rlcheck.reward.payload.x_read_body__mutmut_9":
        'default Content-Length "" -> "XXXX": both fail isdigit(), so both mean "not declared"',
    # rlcheck/reward/slime_math.py
    "rlcheck.reward.slime_math.x__sympy_equal__mutmut_9":
        'the names handed to sympy\'s parser also hold sympy\'s private ones (startswith "XX_XX"): no answer that '
        "passes the two-letter guard names a private attribute (each starts with _, and parse_expr reads no _ name "
        "from an answer that has passed normalization unchanged)",
    **{f"rlcheck.reward.slime_math.x__sympy_equal__mutmut_{n}":
       "parse_expr's local_dict None or absent instead of {}: parse_expr starts from an empty dict either way"
       for n in (13, 17)},
    # rlcheck/reward/pool.py
    "rlcheck.reward.pool.xǁScorerPoolǁ__init____mutmut_22":
        "_closing = False -> None: it is only ever read as a truth value, and None is false",
    **{f"rlcheck.reward.pool.xǁScorerPoolǁclose__mutmut_{n}":
       "close()'s last wait for the reapers without a bound, or 1 s longer: each reaper ends by itself within its "
       "join grace (at most 2 s) and 2 s after a SIGKILL, under the drain_s + 5 s bound" for n in (17, 19, 22)},
    # rlcheck/reward/app.py
    **{f"rlcheck.reward.app.xǁRewardServiceǁhealth__mutmut_{n}": _STRICT.format(
        "zip(pairs, outcomes, strict=True): the outcomes are asyncio.gather's, one per pair") for n in (11, 14, 15)},
    **{f"rlcheck.reward.app.xǁRewardServiceǁ_score__mutmut_{n}":
       "a reply header's name in another case (x-request-id, X-REQUEST-ID, connection, CONNECTION): HTTP header "
       "names are case-insensitive and Starlette writes every one lowercased" for n in (3, 4, 27, 28, 41, 42)},
    **{f"rlcheck.reward.app.xǁRewardServiceǁ_score__mutmut_{n}":
       "a reply header's name in another case (retry-after, X-Reward-Status): HTTP header names are "
       "case-insensitive and Starlette writes every one lowercased" for n in (99, 100, 130, 131)},
    "rlcheck.reward.app.xǁRewardServiceǁscore__mutmut_8":
        'request.headers.get("X-REQUEST-ID"): Starlette\'s Headers.get lowercases the key',
    **{f"rlcheck.reward.app.xǁRewardServiceǁ_score__mutmut_{n}":
       "the label-problem outcome's detail None or absent: that outcome always takes the fallback path, which "
       "logs payload.label_problem and never reads the outcome's detail" for n in (47, 50)},
    "rlcheck.reward.app.xǁRewardServiceǁ__init____mutmut_24":
        "closing = False -> None: it is only ever read as a truth value, and None is false",
    **{f"rlcheck.reward.app.x_create_app__mutmut_{n}": "a route's method in lower case (post, get): FastAPI's "
       "APIRoute stores {method.upper() for method in methods}, so the route answers the same methods" for n in
       (22, 33, 44, 54)},
    **{f"rlcheck.reward.app.x_create_app__mutmut_{n}": "/health's or /metrics' methods=['GET'] -> None or left out: "
       "APIRoute's default for methods None is ['GET'], the same route" for n in (37, 40, 47, 50)},
    # rlcheck/reward/scorers.py
    **{f"rlcheck.reward.scorers.x_load_scorer__mutmut_{n}":
       "the slime_math preload test changed (!=, another name): it only imports pylatexenc and sympy early (a broken "
       "install fails at start); the scorer returned is SCORERS[backend] either way, and importing them for another "
       "backend changes nothing it scores" for n in (1, 2, 3)},
    # rlcheck/reward/procs.py, worker.py
    **{f"rlcheck.reward.procs.xǁScorerProcessǁcpu_now__mutmut_{n}":
       "schedstat's encoding changed (None, absent: the locale's UTF-8; \"ASCII\"): the file is ASCII digits and "
       "spaces, read alike in any ASCII-compatible codec" for n in (2, 4, 6)},
    "rlcheck.reward.procs.xǁScorerProcessǁcpu_now__mutmut_10":
        "ns / 1e9 -> ns / 1000000001.0: one part in 1e9, 1 ns per CPU second, far below the 10 ms the pool's timers "
        "look again at",
    "rlcheck.reward.worker.x_serve__mutmut_6":
        'value\'s first value None -> "": never sent (an error sends None, no error means score_any\'s float was '
        "assigned)",
    # rlcheck/reward/results.py
    "rlcheck.reward.results.x_content_key__mutmut_5": 'codec "ascii" -> "ASCII": codec names are case-insensitive',
    "rlcheck.reward.results.xǁScoringResultsǁscoring__mutmut_16":
        "_done_at.pop(key) -> pop(None) when a scoring starts: a key is in _done_at only while its entry holds a kept "
        "outcome (_expire and the bound drop both together, an outcome not kept never enters it), and such a key is "
        "reused, never started again, so there is nothing to drop",
    "rlcheck.reward.results.xǁScoringResultsǁ_expire__mutmut_12":
        "_entries.pop(key, None) -> pop(key): a key in _done_at always has its entry (the same invariant), so the "
        "default is never used",
    "rlcheck.reward.results.xǁScoringResultsǁ_expire__mutmut_15":
        "popitem(last=False) -> popitem(last=None): None is false, the same oldest item",
    # rlcheck/reward/metrics.py
    **{f"rlcheck.reward.metrics.xǁHistogramǁrender__mutmut_{n}": _STRICT.format(
        "zip(bounds + ['+Inf'], counts, strict=True): __init__ makes one count per bound and one for +Inf")
       for n in (6, 9, 17)},
    **{f"rlcheck.reward.metrics.xǁServiceMetricsǁrender__mutmut_{n}":
       'the series key of an unlabelled gauge "" -> "XXXX": _gauge reads a key only when the gauge has a label'
       for n in (16, 33, 45, 58, 70)},
    # rlcheck/reward/config.py
    **{f"rlcheck.reward.config.x_cpu_quota__mutmut_{n}":
       'the "max" test of cpu.max\'s first field changed (fields[1], "XXmaxXX", "MAX"): a "max" that reaches int() '
       "raises ValueError, whose handler returns the same None" for n in (5, 7, 8)},
    # memory
    'rlcheck.probes.recipe.memory.x_evaluate_stage_memory__mutmut_29':
        "1e9 -> 1000000001.0 in a '{:.2f}B' figure: moves it by 1e-9 relative, below the 2 decimals printed "
        'for any parameter count under 1e16',
    'rlcheck.probes.recipe.memory.x__stage_details__mutmut_6':
        "1e9 -> 1000000001.0 in a '{:.2f}B' figure: moves it by 1e-9 relative, below the 2 decimals printed",
    'rlcheck.probes.recipe.memory.x__stage_details__mutmut_31':
        "1e9 -> 1000000001.0 in a '{:.2f}B' figure: moves it by 1e-9 relative, below the 2 decimals printed",
    'rlcheck.probes.recipe.memory.x__stage_details__mutmut_33':
        "1e9 -> 1000000001.0 in a '{:.2f}B' figure: moves it by 1e-9 relative, below the 2 decimals printed",
    'rlcheck.probes.recipe.memory.x__stage_details__mutmut_39':
        'zip(strict=True) -> strict=None: stages, activations and buffers are built from the same stage list,'
        ' always of one length',
    'rlcheck.probes.recipe.memory.x__stage_details__mutmut_43':
        'zip(strict=True) -> no strict: the three tuples always have one length',
    'rlcheck.probes.recipe.memory.x__stage_details__mutmut_44':
        'zip(strict=True) -> strict=False: the three tuples always have one length',
    # memory_params
    'rlcheck.probes.recipe.memory_params.x_kv_bytes_per_token__mutmut_7':
        "the default kv-cache-dtype 'auto' -> 'XXautoXX': only an 'fp8' prefix is tested, any other string is bf16",
    'rlcheck.probes.recipe.memory_params.x_kv_bytes_per_token__mutmut_8':
        "the default kv-cache-dtype 'auto' -> 'AUTO': only an 'fp8' prefix is tested",
    'rlcheck.probes.recipe.memory_params.x_stage_loads__mutmut_13':
        'the last stage end len + 1 -> len + 2: it only ends a slice, which stops at the last layer either way',
    **{f"rlcheck.probes.recipe.memory_params.x_stage_loads__mutmut_{n}":
       "zip(starts, ends, strict=True) -> strict None / False / left out: ends is starts[1:] plus one, always "
       "the same length" for n in (24, 27, 28)},
    **{f"rlcheck.probes.recipe.memory_params.x_stage_loads__mutmut_{n}":
       "world // (TP x PP) or // (EP x ETP x PP) -> /: the same value for a world that divides, and the only caller "
       "(memory.estimate_stage_memory) refuses one that does not before it calls stage_loads" for n in (15, 17)},
    # memory_kv
    'rlcheck.probes.recipe.memory_kv.x_nsa_allocated_bytes_per_token__mutmut_6':
        "the default kv-cache-dtype 'auto' -> 'XXautoXX': only 'fp8_e4m3' is compared, any other string takes"
        ' the same branch',
    'rlcheck.probes.recipe.memory_kv.x_nsa_allocated_bytes_per_token__mutmut_7':
        "the default kv-cache-dtype 'auto' -> 'AUTO': only 'fp8_e4m3' is compared",
    'rlcheck.probes.recipe.memory_kv.x__weight_bytes__mutmut_6':
        "the default quantization '' -> 'XXXX': neither matches fp8|int8",
    'rlcheck.probes.recipe.memory_kv.x__weight_bytes__mutmut_16':
        "rsplit('/', 1)[-1] -> rsplit('/')[-1]: the last path part is the same however many splits",
    'rlcheck.probes.recipe.memory_kv.x__weight_bytes__mutmut_19':
        "rsplit('/', 1)[-1] -> rsplit('/', 2)[-1]: the last path part is the same",
    'rlcheck.probes.recipe.memory_kv.x__fraction__mutmut_17':
        'the rejected fraction -1.0 -> -2.0: both fall outside (0, 1]',
    'rlcheck.probes.recipe.memory_kv.x__fraction__mutmut_22':
        'fraction <= 1 -> <= 2: the pattern before it admits no number above 1 (0?.d+ or 1(.0*)?)',
    'rlcheck.probes.recipe.memory_kv.x_estimate_kv_pool__mutmut_63':
        'int(x // cell) -> int(x / cell): equal for x >= 0 (truncation is the floor), and max(0, ...) clamps '
        'every negative x to 0 either way',
    'rlcheck.probes.recipe.memory_kv.x_kv_calibration__mutmut_4':
        "attention TP 8 -> None for GLM-5.2's MLA cell: kv_bytes_per_token's MLA branch never reads the "
        'attention TP (one latent KV per token on every rank)',
    'rlcheck.probes.recipe.memory_kv.x_kv_calibration__mutmut_28':
        'int(x // cell) -> int(x / cell): equal for x >= 0, and negatives clamp to 0 after the page rounding '
        'either way',
    'rlcheck.probes.recipe.memory_kv.x_evaluate_kv_pool__mutmut_51':
        '_kv_remedy(pool, profile) -> _kv_remedy(pool, None): _kv_remedy does not read its profile argument',
    # node_evaluate
    'rlcheck.probes.cluster.node_evaluate.x__cuda_major__mutmut_5':
        "version.split('.', 1)[0] -> split('.')[0]: the first part is the same however many splits",
    'rlcheck.probes.cluster.node_evaluate.x__cuda_major__mutmut_8':
        "version.split('.', 1)[0] -> split('.', 2)[0]: the first part is the same",
    'rlcheck.probes.cluster.node_evaluate.x_evaluate_node_shm__mutmut_51':
        "the default '' of profile.source.get('shm_min_gib', ...) -> None: a profile with a shm_min_gib "
        'threshold always has its source (HardwareProfile refuses a figure without one), so the default is '
        'never taken',
    'rlcheck.probes.cluster.node_evaluate.x_evaluate_node_shm__mutmut_53':
        "the default of profile.source.get('shm_min_gib', ...) dropped: never taken, as above",
    'rlcheck.probes.cluster.node_evaluate.x_evaluate_node_shm__mutmut_56':
        "the default '' -> 'XXXX': never taken, as above",
    # image
    'rlcheck.probes.image.image.x__installed_wheels__mutmut_2':
        "metadata['Name'] -> ['name']: package metadata is an email.message.Message, whose header lookup ignores case",
    'rlcheck.probes.image.image.x__installed_wheels__mutmut_3':
        "metadata['Name'] -> ['NAME']: header lookup ignores case",
    'rlcheck.probes.image.image.x__installed_wheels__mutmut_8':
        "the text of a distribution without a WHEEL file '' -> 'XXXX': foreign_wheels reads only 'Tag:' "
        'lines, which neither has',
    # sample_caps
    'rlcheck.probes.recipe.sample_caps.x_evaluate_sample_caps__mutmut_67':
        'an unset response cap 0 -> 1: it is only compared as response > budget, and budget = cap x CP >= 1 '
        '(both are positive integers), so 0 and 1 both stay below it',
    **{f"rlcheck.probes.recipe.sample_caps.x_evaluate_sample_caps__mutmut_{n}":
       "the default framework 'slime' -> 'XXslimeXX' / 'SLIME': the framework is only compared with 'miles', so "
       "any other name takes SLIME's reading" for n in (1, 2)},
    # gpu_health_judges
    'rlcheck.probes.cluster.node_health.x_evaluate_node_xid__mutmut_4':
        '_preamble(gpus=False) -> gpus=None: the flag is only tested for truth, and None is false',
    'rlcheck.probes.cluster.node_health.x_evaluate_node_bus__mutmut_4':
        '_preamble(gpus=False) -> gpus=None: the flag is only tested for truth',
    'rlcheck.probes.cluster.node_health.x_evaluate_node_xid__mutmut_95':
        'the strongest WARN action by ACTION_ORDER -> key=None (by name): rlcheck/data/xid.toml gives its '
        'WARN Xids only monitor and restart-app, which sort the same by name as by strength',
    'rlcheck.probes.cluster.node_health.x_evaluate_node_xid__mutmut_97':
        'key dropped (by name): the WARN actions are monitor and restart-app, same order by name as by strength',
    # rlcheck/deploy/k8s_api.py
    "rlcheck.deploy.k8s_api.x__call__mutmut_42":
        "200 <= status < 300 -> status <= 300: 300 never reaches it; the test just before refuses every 300-399",
    "rlcheck.deploy.k8s_api.x__call__mutmut_43":
        "200 <= status < 300 -> status < 301: 300 never reaches it; the test just before refuses every 300-399",
    "rlcheck.deploy.k8s_api.x__condition_and_event__mutmut_6":
        "quote(node, safe='') -> safe='XXXX': X is a letter, never quoted anyway; '/' and every other reserved "
        "character are still quoted",
    "rlcheck.deploy.k8s_api.x__condition_and_event__mutmut_47":
        "quote(namespace, safe='') -> safe='XXXX': X is a letter, never quoted anyway; '/' and every other "
        "reserved character are still quoted",
    "rlcheck.deploy.k8s_api.x_apply__mutmut_11":
        "quote(node, safe='') -> safe='XXXX': X is a letter, never quoted anyway; '/' and every other reserved "
        "character are still quoted",
    "rlcheck.deploy.k8s_api.x__exchange__mutmut_42":
        'getheader("Location") -> "location": http.client looks header names up without regard to case',
    "rlcheck.deploy.k8s_api.x__exchange__mutmut_43":
        'getheader("Location") -> "LOCATION": http.client looks header names up without regard to case',
    "rlcheck.deploy.k8s_api.x__json__mutmut_3":
        'json.loads(raw or b"null") -> b"XXnullXX": an empty answer then fails to parse, and the handler returns '
        "None, what null decodes to",
    "rlcheck.deploy.k8s_api.x__json__mutmut_4":
        'json.loads(raw or b"null") -> b"NULL": an empty answer then fails to parse, and the handler returns '
        "None, what null decodes to",
    "rlcheck.deploy.k8s_api.x_in_cluster__mutmut_3":
        'env.get(HOST, "") -> default None: host is only tested for its truth before use, and None is false as "" is',
    "rlcheck.deploy.k8s_api.x_in_cluster__mutmut_5":
        'env.get(HOST, "") -> no default (None): host is only tested for its truth before use, and None is false '
        'as "" is',
    "rlcheck.deploy.k8s_api.x_in_cluster__mutmut_10":
        'env.get(PORT, "") -> default None: port is only tested for its truth before use, and None is false as "" is',
    "rlcheck.deploy.k8s_api.x_in_cluster__mutmut_12":
        'env.get(PORT, "") -> no default (None): port is only tested for its truth before use, and None is false '
        'as "" is',
    "rlcheck.deploy.k8s_api.x_in_cluster__mutmut_24":
        'read_text(encoding="utf-8") -> the locale\'s encoding: a service-account token is a JWT (base64url and '
        "dots, ASCII only), which every ASCII-compatible encoding decodes alike, and Python runs in UTF-8 mode "
        "under the C/POSIX locale a pod starts with",
    "rlcheck.deploy.k8s_api.x_in_cluster__mutmut_29":
        'encoding="utf-8" -> "UTF-8": codec names are looked up without regard to case',
    # rlcheck/preflight/slurm.py: _short only feeds same_host, which compares _short(a) with _short(b)
    "rlcheck.preflight.slurm.x__short__mutmut_1":
        "lower() -> upper(): both sides of same_host's comparison are folded the same way",
    "rlcheck.preflight.slurm.x__short__mutmut_10": 'split("#", 1)[0] -> split("#")[0]: the first part is the same',
    "rlcheck.preflight.slurm.x__short__mutmut_13": 'split("#", 1)[0] -> split("#", 2)[0]: the first part is the same',
    "rlcheck.preflight.slurm.x__short__mutmut_5": 'split(".", 1)[0] -> split(".")[0]: the first part is the same',
    "rlcheck.preflight.slurm.x__short__mutmut_16": 'split(".", 1)[0] -> split(".", 2)[0]: the first part is the same',
    "rlcheck.preflight.slurm.x_own_verdicts__mutmut_35":
        'check_id.split("_", 1)[0] -> split("_")[0]: the first part (the area) is the same',
    "rlcheck.preflight.slurm.x_own_verdicts__mutmut_38":
        'check_id.split("_", 1)[0] -> split("_", 2)[0]: the first part (the area) is the same',
    **{f"rlcheck.preflight.slurm.x_run_tier__mutmut_{n}":
       _STRICT.format("zip(checks, boxes, strict=True): boxes is made with one box per check")
       for n in (9, 12, 13, 37, 40, 41)},
    # rlcheck/e2e/runner.py
    **{f"rlcheck.e2e.runner.x__label_value__mutmut_{n}":
       "the label's value cut at its closing quote with split('\"', 2) or split('\"') instead of split('\"', 1): the "
       "part before the first quote is the same whatever the number of splits" for n in (6, 16)},
    **{f"rlcheck.e2e.runner.x_reward_counts__mutmut_{n}":
       "a comment line (#...) skipped only when it has no space, or when it starts with 'XX#XX': a comment read on "
       "has a series part starting with '#', which no series read below matches, so it counts nothing either way"
       for n in (6, 9)},
    "rlcheck.e2e.runner.x_run_case__mutmut_25":
       "tail_done starts as None instead of False: it is only read as a truth value until it is set True",
    "rlcheck.e2e.runner.x_run_case__mutmut_34":
       'the log opened with encoding "UTF-8" instead of "utf-8": codec names are case-insensitive',
    # rlcheck/repro/cache.py
    "rlcheck.repro.cache.xǁStoreǁload__mutmut_9":
       'an entry read with encoding "UTF-8" instead of "utf-8": codec names are case-insensitive',
    "rlcheck.repro.cache.x_source_term__mutmut_20":
       'a source decoded as "UTF-8" instead of "utf-8": codec names are case-insensitive',
    **{f"rlcheck.repro.cache.xǁStoreǁsave__mutmut_{n}":
       'an entry written with encoding None, left out or "UTF-8" instead of "utf-8": json.dump writes ASCII only '
       "(ensure_ascii), which the locale's codec (an ASCII superset on every POSIX system) writes as the same bytes, "
       "and codec names are case-insensitive" for n in (56, 59, 63)},
    # rlcheck/e2e/watch.py
    "rlcheck.e2e.watch.x__shown__mutmut_1":
        "<= SUPPORTING_SHOWN -> <: at exactly SUPPORTING_SHOWN numbers, the first SUPPORTING_SHOWN - 1 and the last "
        "are all of them",
    "rlcheck.e2e.watch.xǁWatcherǁphase_times__mutmut_4":
        "range(loop + 1) -> range(loop + 2): the extra loop gets no milestone, and the empty loops are dropped",
    # rlcheck/e2e/slime_metrics.py
    "rlcheck.e2e.slime_metrics.x__entries__mutmut_5":
        "while i < n -> i <= n: at i == n the separator loop stops at once and `i >= n` returns (out, False), what "
        "leaving the loop returns",
    "rlcheck.e2e.slime_metrics.x__entries__mutmut_32":
        "end < 0 -> end <= 0: the key's closing quote is searched from i + 1 >= 1, so end is -1 or at least 1",
    "rlcheck.e2e.slime_metrics.x__entries__mutmut_33":
        "end < 0 -> end < 1: the key's closing quote is searched from i + 1 >= 1, so end is -1 or at least 1",
    "rlcheck.e2e.slime_metrics.x__entries__mutmut_63":
        "close < 0 -> close <= 0: a value's closing quote is searched from i + 1 >= 1, so close is -1 or at least 1",
    "rlcheck.e2e.slime_metrics.x__entries__mutmut_64":
        "close < 0 -> close < 1: a value's closing quote is searched from i + 1 >= 1, so close is -1 or at least 1",
    "rlcheck.e2e.slime_metrics.x__value__mutmut_15":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_16":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_17":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_18":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_19":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_20":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_21":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_22":
        _WORDS,
    "rlcheck.e2e.slime_metrics.x__value__mutmut_23":
        _WORDS,
    # rlcheck/e2e/slime_log.py
    "rlcheck.e2e.slime_log.x__flag_value__mutmut_1":
        "value = None -> '': its only reader, _nonzero, takes both for zero (float('') raises ValueError -> False)",
    "rlcheck.e2e.slime_log.x_detect_version__mutmut_30":
        "`not best or best[0] == 0 or tie` -> `not best and best[0] == 0 or tie`: best always holds one count per "
        "table (three), and a best of 0 means all three are 0, a tie, None either way",
    "rlcheck.e2e.slime_log.x_detect_version__mutmut_36":
        "len(best) > 1 -> >= 1: best always holds one count per table (three), so both are true",
    "rlcheck.e2e.slime_log.x_detect_version__mutmut_37":
        "len(best) > 1 -> > 2: best always holds one count per table (three), so both are true",
    "rlcheck.e2e.slime_log.x_parse_framework__mutmut_18":
        "version_for('miles', None) -> version_for('XXmilesXX', None): only the version is read, and a framework "
        "with no release gets 'main' on both paths",
    "rlcheck.e2e.slime_log.x_parse_framework__mutmut_19":
        "version_for('miles', None) -> version_for('MILES', None): only the version is read, and a framework with no "
        "release gets 'main' on both paths",
    "rlcheck.e2e.slime_log.x_plan__mutmut_41":
        "regex(name=timer) also when timer is '': no milestone without a timer uses a statement with a {name} field "
        "(every table), so name='' fixes nothing",
    "rlcheck.e2e.slime_log.xǁStatementǁregex__mutmut_14":
        "spec or '' -> spec or 'XXXX': a field without a spec gets 'XXXX', which does not end in 'f' either",
    # rlcheck/e2e/replay.py
    "rlcheck.e2e.replay.x__judge__mutmut_12":
        "_verdict(watcher, end) -> _verdict(None, end): _verdict never reads its watcher",
    "rlcheck.e2e.replay.x__judge__mutmut_32":
        "_verdict(watcher, end) -> _verdict(None, end): _verdict never reads its watcher",
    "rlcheck.e2e.replay.x__judge__mutmut_73":
        "`due[1].name if due` -> always due[1].name: the run has not ended there (every ended run returned above), so "
        "deadline() is never None",
    "rlcheck.e2e.replay.x__judge__mutmut_75":
        "'?' -> 'XX?XX': the run has not ended there (every ended run returned above), so deadline() is never None",
    "rlcheck.e2e.replay.x__verdict__mutmut_2":
        "the end-is-None branch of _verdict: its only caller, _judge, passes an ended run",
    "rlcheck.e2e.replay.x__verdict__mutmut_3":
        "the end-is-None branch of _verdict: its only caller, _judge, passes an ended run",
    "rlcheck.e2e.replay.x__verdict__mutmut_4":
        "the end-is-None branch of _verdict: its only caller, _judge, passes an ended run",
    "rlcheck.e2e.replay.x__verdict__mutmut_5":
        "the end-is-None branch of _verdict: its only caller, _judge, passes an ended run",
    "rlcheck.e2e.replay.x__yearless__mutmut_53":
        "mon <= 12 -> <= 13: month 13 then fails calendar.timegm (datetime.date raises ValueError): None either way",
    "rlcheck.e2e.replay.x_read_lines__mutmut_9":
        "the skip loop's readline(1 << 20) -> readline(None): the rest of a cut line is skipped either way (only the "
        "memory one read takes differs)",
    "rlcheck.e2e.replay.x_read_lines__mutmut_11":
        "the skip loop's chunk 1 << 20 -> 2 << 20: the rest of a cut line is skipped either way",
    "rlcheck.e2e.replay.x_read_lines__mutmut_12":
        "the skip loop's chunk 1 << 20 -> 1 << 21: the rest of a cut line is skipped either way",
    "rlcheck.e2e.replay.x_read_lines__mutmut_21": 'decode("utf-8", ...) -> decode(...): UTF-8 is the default codec',
    "rlcheck.e2e.replay.x_read_lines__mutmut_24": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.e2e.replay.x_survey__mutmut_15":
        "seen_ref = seen_log_probs = False -> None: each is only tested for truth, and None is false as False is",
    "rlcheck.e2e.replay.x_survey__mutmut_42":
        "a hint line kept to 4096 -> 4097 characters: catalog.log_traits searches only a line's first 4096",
    "rlcheck.e2e.replay.x_replay__mutmut_39":
        'parse_framework("miles==main") -> ("MILES==MAIN"): the name is compared lower-cased and any Miles version '
        "gives miles==main",
    "rlcheck.e2e.replay.x_replay__mutmut_91":
        "the full-stamp test _TS.search(line, 0, 200) -> no end: a line whose only full stamp lies past 200 characters "
        "has its year-less stamp read in `year`, and year_of gives `year` back",
    "rlcheck.e2e.replay.x_replay__mutmut_93":
        "the full-stamp test's end 200 -> 201: a line whose only full stamp ends there has its year-less stamp read in "
        "`year`, and year_of gives `year` back",
    "rlcheck.e2e.replay.x_replay__mutmut_113":
        "`clock is None or first is None` -> `and`: first and clock are set together, on the first stamp",
    "rlcheck.e2e.replay.x_replay__mutmut_127":
        "the closing check also after the run ended: check() of an ended run with nothing pending (finish() just ran) "
        "returns nothing",
    "rlcheck.e2e.replay.x_replay__mutmut_129":
        "no closing check: the loop checked the same clock before the last line, and the last line can only end the "
        "run or move the next deadline later (a consequence it leaves pending is named by finish())",
    "rlcheck.e2e.replay.x_replay__mutmut_130":
        "no closing check (first is None implies clock is None): the loop checked the same clock before the last "
        "line, and the last line can only end the run or move the next deadline later",
    "rlcheck.e2e.replay.x_replay__mutmut_131":
        "no closing check (clock is set whenever first is): the loop checked the same clock before the last line, and "
        "the last line can only end the run or move the next deadline later",
    # rlcheck/probes/recipe/health_wait.py
    "rlcheck.probes.recipe.health_wait.x_deepgemm_users__mutmut_22":
        '(option(...) or "") == "fp8" -> (option(...) or "XXXX"): with the flag unset neither equals "fp8"',
    "rlcheck.probes.recipe.health_wait.x_deepgemm_users__mutmut_9":
        'env default "" -> "XXXX": with SGLANG_ENABLE_JIT_DEEPGEMM unset neither is a spelling of false',
    # rlcheck/history.py
    "rlcheck.history.x_read_figure__mutmut_5":
        'a missing summary read as "XXXX" instead of "": neither holds a number with a throughput unit',
    "rlcheck.history.x_read_figure__mutmut_10":
        'missing details read as "XXXX" instead of "": neither holds a number with a throughput unit',
    "rlcheck.history.x_read_report__mutmut_3":
        'read_text(encoding="utf-8") -> the locale\'s encoding: UTF-8 wherever the self-tests run (Python 3.15 makes '
        "it the default everywhere)",
    "rlcheck.history.x_read_report__mutmut_5": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.e2e.watch.xǁWatcherǁ__init____mutmut_25":
        "_progress_line = 0 -> None: it is only read for its truth (a timeout's supporting line), and both are false",
    "rlcheck.e2e.watch.xǁWatcherǁ__init____mutmut_29":
        "_retry_loop = _retry_count = 0 -> None: the first retry line finds _retry_loop != loop and sets both to "
        "(loop, 0) before counting",
    "rlcheck.e2e.watch.xǁWatcherǁfeed__mutmut_17":
        "a line no entry names gets role '' -> 'XXXX': the role is only compared with cause, consequence, fallback "
        "and invariant, which neither is",
    "rlcheck.e2e.watch.xǁWatcherǁ__init____mutmut_30":
        "_retry_loop = _retry_count = 0 -> 1: the first retry line in loop 0 finds _retry_loop (1) != loop and sets "
        "both to (0, 0) before counting; a retry in a later loop resets them the same way",
    "rlcheck.history.x__draw_fleet__mutmut_20":
        _STRICT.format("zip(axes[:, 0], panels, strict=True): subplots made one row of axes per panel"),
    "rlcheck.history.x__draw_fleet__mutmut_23":
        _STRICT.format("zip(axes[:, 0], panels, strict=True): subplots made one row of axes per panel"),
    "rlcheck.history.x__draw_fleet__mutmut_25":
        _STRICT.format("zip(axes[:, 0], panels, strict=True): subplots made one row of axes per panel"),
    "rlcheck.history.x__draw_fleet__mutmut_88":
        _STRICT.format("zip(ax.get_yticklabels(), panel.nodes, strict=True): labels just set from panel.nodes"),
    "rlcheck.history.x__draw_fleet__mutmut_91":
        _STRICT.format("zip(ax.get_yticklabels(), panel.nodes, strict=True): labels just set from panel.nodes"),
    "rlcheck.history.x__draw_fleet__mutmut_92":
        _STRICT.format("zip(ax.get_yticklabels(), panel.nodes, strict=True): labels just set from panel.nodes"),
    "rlcheck.history.x__draw_lines__mutmut_22":
        _STRICT.format("zip(axes[:, 0], units, strict=True): subplots made one row of axes per unit"),
    "rlcheck.history.x__draw_lines__mutmut_25":
        _STRICT.format("zip(axes[:, 0], units, strict=True): subplots made one row of axes per unit"),
    "rlcheck.history.x__draw_lines__mutmut_27":
        _STRICT.format("zip(axes[:, 0], units, strict=True): subplots made one row of axes per unit"),
    "rlcheck.history.x__latest_score__mutmut_8":
        "a passing latest run scored 2 instead of 1: only the order against 0 (not passing) is used, the same",
    "rlcheck.history.x_fleet_panels__mutmut_56":
        "change <= -HIGHLIGHT_DROP -> <: figure / median lies in [0.5, 1) there, whose doubles are 2**-53 apart, and "
        "1 - 0.05 is not one of them: the change is never exactly -0.05",
    "rlcheck.probes.recipe.argv_shell.x_bare_tokens__mutmut_5":
        _STRICT.format("zip(tokens, redact(tokens), strict=True): redact returns one token for each"),
    "rlcheck.probes.recipe.argv_shell.x_bare_tokens__mutmut_8":
        _STRICT.format("zip(tokens, redact(tokens), strict=True): redact returns one token for each"),
    "rlcheck.probes.recipe.argv_shell.x_bare_tokens__mutmut_11":
        _STRICT.format("zip(tokens, redact(tokens), strict=True): redact returns one token for each"),
    "rlcheck.probes.recipe.argv_shell.x_difference__mutmut_18":
        "zip(a, b, strict=False) -> strict=None or no strict: each means not strict, the shorter side ends the pairs",
    "rlcheck.probes.recipe.argv_shell.x_difference__mutmut_21":
        "zip(a, b, strict=False) -> strict=None or no strict: each means not strict, the shorter side ends the pairs",
    "rlcheck.probes.image.torch_pg.x_collect_pg__mutmut_12":
        'rel.split("/", 1)[0] -> split("/")[0]: the first part (the package) is the same',
    "rlcheck.probes.image.torch_pg.x_collect_pg__mutmut_15":
        'rel.split("/", 1)[0] -> split("/", 2)[0]: the first part (the package) is the same',
    "rlcheck.probes.image.torch_pg.x_collect_pg__mutmut_20":
        'read_text(encoding="utf-8") -> the locale\'s encoding: UTF-8 wherever the self-tests run (Python 3.15 makes '
        "it the default everywhere)",
    "rlcheck.probes.image.torch_pg.x_collect_pg__mutmut_23":
        'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.probes.cluster.node_addresses.x_parse__mutmut_3":
        'strip("[]") -> strip("XX[]XX"): an IP address or its brackets never hold an X',
    "rlcheck.probes.cluster.node_addresses.x_parse__mutmut_13":
        'strip("[]") -> strip("XX[]XX"): an IP address or its brackets never hold an X',
    "rlcheck.probes.cluster.node_addresses.x_parse__mutmut_18":
        'split("%", 1)[0] -> split("%")[0]: the first part is the same',
    "rlcheck.probes.cluster.node_addresses.x_parse__mutmut_21":
        'split("%", 1)[0] -> split("%", 2)[0]: the first part is the same',
    "rlcheck.probes.image.numpy_megatron.x__major__mutmut_2":
        "a version with no major read as 1 instead of 0: it is only compared with >= 2, false for both",
    # rlcheck/probes/node/tms.py
    "rlcheck.probes.node.tms.x_rule_for__mutmut_14":
        'version or "" -> version or "XXXX": neither starts with a digit, so neither is read as a release',
    "rlcheck.probes.node.tms.x_rule_for__mutmut_30":
        "a short version padded with 1s instead of 0s: (0, 3) becomes (0, 3, 1), still a 0.3 release no later "
        "than 0.3.1; no two-part or one-part version sits between a bound and the next release",
    # rlcheck/probes/cluster/nccl_pairs.py
    "rlcheck.probes.cluster.nccl_pairs.x_repair_rounds__mutmut_24":
        "rounds searched up to len(rounds) + 1 instead of len(rounds): at i == len(rounds) every healthy node "
        "the suspect has not met is taken, so a further round is only reached when it has met all of them, and "
        "then the met test rejects each before the round is looked at",
    # rlcheck/report_nodes.py
    "rlcheck.report_nodes.x_grouped_rows__mutmut_45":
        "members[0] -> members[1] for the summary every member shares (same): each member's is that one",
    # rlcheck/secret_guard.py
    "rlcheck.secret_guard.x__scrub_names__mutmut_21":
        "pending = False -> None: pending is only tested for its truth, and None is false as False is",
    "rlcheck.secret_guard.x_is_secret_name__mutmut_31":
        "text_before = data_before = False -> None: each is or-ed with a bool before any use and read for its "
        "truth, so None and False give the same names",
    "rlcheck.secret_guard.x_hide__mutmut_11":
        "value.index(core) -> rindex: the core occurs once in the value; a later occurrence would end inside the "
        "closers stripped after it, while the core's last character is no closer",
    # rlcheck/history_band.py
    "rlcheck.history_band.x_read_reports__mutmut_4":
        "is_dir() -> True: globbing a folder that does not exist yields no file, the same empty reading",
    "rlcheck.history_band.x_read_reports__mutmut_16":
        "sort key (created, name) -> the whole (created, name, report): two reports of one folder never share a file "
        "name, so the report itself is never compared",
    "rlcheck.history_band.x_judge_all__mutmut_17":
        "a verdict without a note replaced by an equal copy (its details joined from itself alone): the same value",
    "rlcheck.history_band.x_judge__mutmut_9":
        "band_of(figures, unit) -> (figures, None): judge reads only the band's figures and median, never its unit",
    "rlcheck.history_band.x_band_of__mutmut_7":
        "last > 0 -> last > 1: a band of the last one run keeps one figure, fewer than MIN_RUNS (3): None either way",
    # rlcheck/probes/recipe/: checkpoint_save, sglang_flags, hf_config, inline_secrets
    "rlcheck.probes.recipe.checkpoint_save.x_collect_save__mutmut_6":
        'split("/", 1)[0] -> split("/")[0]: the first part is the same',
    "rlcheck.probes.recipe.checkpoint_save.x_collect_save__mutmut_9":
        'split("/", 1)[0] -> split("/", 2)[0]: the first part is the same',
    "rlcheck.probes.recipe.checkpoint_save.x_collect_save__mutmut_14":
        'read_text(encoding="utf-8") -> encoding=None: the locale\'s encoding, which is UTF-8 here (Python\'s '
        "UTF-8 mode under the C locale the mutation run has); differs only under a non-UTF-8 locale",
    "rlcheck.probes.recipe.checkpoint_save.x_collect_save__mutmut_17":
        'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.probes.recipe.sglang_flags.x__advice__mutmut_14":
        "get_close_matches(n=1) -> n's default 3: close[0] is the best match either way (best first)",
    "rlcheck.probes.recipe.sglang_flags.x__advice__mutmut_15":
        "get_close_matches(n=1) -> n=2: close[0] is the best match either way (best first)",
    "rlcheck.probes.recipe.sglang_flags.x_collect_sglang_options__mutmut_1":
        "the default deadline 180 s -> 181 s: only a parser that runs between 180 and 181 s tells them apart, which "
        "no self-test waits for (the deadline itself is judged with timeout_s=2)",
    "rlcheck.probes.recipe.sglang_flags.x_evaluate_sglang_flags__mutmut_14":
        'split("=", 1)[0] -> split("=")[0]: the first part is the same',
    "rlcheck.probes.recipe.sglang_flags.x_evaluate_sglang_flags__mutmut_17":
        'split("=", 1)[0] -> split("=", 2)[0]: the first part is the same',
    "rlcheck.probes.recipe.hf_config.x_collect_hf_config__mutmut_33":
        'read_text(encoding="utf-8") -> encoding=None: the locale\'s encoding, which is UTF-8 here (Python\'s '
        "UTF-8 mode under the C locale the mutation run has); differs only under a non-UTF-8 locale",
    "rlcheck.probes.recipe.hf_config.x_collect_hf_config__mutmut_35":
        'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.probes.recipe.inline_secrets.x__command__mutmut_8":
        'skip_next = False -> None after a skipped word: only read for its truth',
    "rlcheck.probes.recipe.inline_secrets.x__command__mutmut_26":
        "a prefix finding's name '' -> None: _place reads it only for its truth, false both ways",
    "rlcheck.probes.recipe.inline_secrets.x__command__mutmut_40":
        "prefix = False -> None after a command's name: only read for its truth",
    "rlcheck.probes.recipe.inline_secrets.x__command__mutmut_73":
        "the first word's before '' -> 'XXXX': `before` matters only when it starts with '-', which neither does",
    "rlcheck.probes.recipe.inline_secrets.x__env__mutmut_7":
        "an env finding's name '' -> None: _place reads it only for its truth, false both ways",
    "rlcheck.probes.recipe.inline_secrets.x__env__mutmut_18":
        "an env finding's name '' -> None: _place reads it only for its truth, false both ways",
    "rlcheck.probes.recipe.inline_secrets.x__env__mutmut_9":
        "an env finding's value -> None: only its place is kept",
    "rlcheck.probes.recipe.inline_secrets.x__env__mutmut_20":
        "an env finding's value -> None: only its place is kept",
    "rlcheck.probes.recipe.inline_secrets.x__split__mutmut_42":
        'end < 0 -> end <= 0: the closing quote is searched from i + 1 >= 1, never found at 0',
    "rlcheck.probes.recipe.inline_secrets.x__split__mutmut_43":
        'end < 0 -> end < 1: the closing quote is searched from i + 1 >= 1, never found at 0',
    "rlcheck.probes.recipe.inline_secrets.x_find_inline_secrets__mutmut_14":
        "the first token's before '' -> 'XXXX': `before` matters only when it starts with '-', which neither does",
    "rlcheck.probes.recipe.inline_secrets.x_redact__mutmut_12":
        "the first token's before '' -> 'XXXX': `before` matters only when it starts with '-', which neither does",
    "rlcheck.probes.recipe.inline_secrets.x_redact_entrypoint__mutmut_12":
        "the places' prefix '' -> None: only the findings' rule and value are read",
    "rlcheck.probes.recipe.inline_secrets.x_redact_entrypoint__mutmut_16":
        "the places' prefix '' -> 'XXXX': only the findings' rule and value are read",
    "rlcheck.probes.recipe.inline_secrets.x_redact_entrypoint__mutmut_40":
        "the places' prefix '' -> None: the re-check reads only the findings' rule",
    "rlcheck.probes.recipe.inline_secrets.x_redact_entrypoint__mutmut_45":
        "the places' prefix '' -> 'XXXX': the re-check reads only the findings' rule",
    "rlcheck.probes.recipe.inline_secrets.x_redacted_places__mutmut_1":
        "the default entrypoint '' -> 'XXXX': neither holds the marker",
    "rlcheck.probes.recipe.inline_secrets.x_token_secret__mutmut_1":
        "the default before '' -> 'XXXX': `before` matters only when it starts with '-', which neither does",
    "rlcheck.framework.detect.x_choose__mutmut_12":
        "a framework without a version looked up as '' -> 'XXXX': COMMITTED holds only release versions, so both miss "
        "and give the main schema",
    # rlcheck/probes/recipe/memory_buffers.py, memory_activations.py
    "rlcheck.probes.recipe.memory_buffers.x_stage_buffers__mutmut_10":
        "a dense model's layers flagged MoE ((False,) -> (True,)): dispatcher_bytes returns 0 for a model without "
        "MoE whatever the count of MoE layers",
    "rlcheck.probes.recipe.memory_activations.x_stage_activations__mutmut_13":
        "a dense model's layers flagged MoE ((False,) -> (True,)): layer_token_bytes takes the MoE width only when "
        "the model has MoE",
    "rlcheck.probes.recipe.memory_activations.x_stage_activations__mutmut_94":
        "block recompute's working chunk `max(full) * n if n else 0.0` -> `if n or True`: with n = 0 the product is "
        "0.0 too; full is never empty (every pipeline stage holds at least one layer: Parallelism refuses a first or "
        "last stage size below 1)",
    **{f"rlcheck.probes.recipe.memory_buffers.x_stage_buffers__mutmut_{n}":
       _STRICT.format("zip(starts, ends, strict=True): ends is starts shifted by one, the same length")
       for n in (47, 50, 51)},
    **{f"rlcheck.probes.recipe.memory_activations.x_stage_activations__mutmut_{n}":
       _STRICT.format("zip(starts, ends, strict=True): ends is starts shifted by one, the same length")
       for n in (43, 46, 47)},
    # rlcheck/probes/recipe/architecture.py, model_registry.py
    "rlcheck.probes.recipe.architecture.x_config_class_names__mutmut_18":
        'rsplit(".", 1)[-1] -> rsplit(".")[-1]: the last part is the same',
    "rlcheck.probes.recipe.architecture.x_config_class_names__mutmut_24":
        'rsplit(".", 1)[-1] -> rsplit(".", 2)[-1]: the last part is the same',
    "rlcheck.probes.recipe.model_registry.x__parse__mutmut_4":
        'codec "utf-8-sig" -> "UTF-8-SIG": codec names are case-insensitive',
    "rlcheck.probes.recipe.model_registry.x_load__mutmut_5":
        'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.probes.recipe.model_registry.x_load__mutmut_3":
        'read_text(encoding="utf-8") -> encoding=None: the locale\'s encoding, which is UTF-8 wherever the self-tests '
        "run (Python's UTF-8 mode under the C locale); differs only under a non-UTF-8 locale",
    **{f"rlcheck.probes.recipe.model_registry.x_mbridge_model_types__mutmut_{n}":
       'a decorator called neither by name nor by attribute (`factory()("t")`): its missing name read as None or '
       '"XXXX" instead of "": none of them is "register_model"' for n in (20, 26)},
    **{f"rlcheck.probes.image.slime_source.x_{fn}__mutmut_{n}":
       'read_text(encoding="utf-8") -> encoding=None: the locale\'s encoding, which is UTF-8 wherever the self-tests '
       "run (Python's UTF-8 mode under the C locale); differs only under a non-UTF-8 locale"
       for fn, n in (("collect_guard", 12), ("collect_kernel", 27))},
    **{f"rlcheck.probes.image.slime_source.x_{fn}__mutmut_{n}":
       'codec "utf-8" -> "UTF-8": codec names are case-insensitive' for fn, n in (("collect_guard", 15),
                                                                                 ("collect_kernel", 30))},
    **{f"rlcheck.probes.image.slime_source.x_collect_kernel__mutmut_{n}":
       'rel.split("/", 1)[0] -> split("/") or split("/", 2): the first part is the same' for n in (12, 15)},
    **{f"rlcheck.probes.image.slime_source.x_pass_config__mutmut_{n}":
       _STRICT.format("zip(node.keys, node.values, strict=True): an ast.Dict has a key (None for **) per value")
       for n in (7, 10, 11)},
    **{f"rlcheck.probes.image.slime_source.x_pipelined__mutmut_{n}":
       _STRICT.format("zip(the last len(defaults) positional parameters, defaults, strict=True): Python gives no "
                      "more defaults than positional parameters") for n in (7, 10, 12)},
    **{f"rlcheck.probes.image.slime_source.x_pipelined__mutmut_{n}":
       _STRICT.format("zip(kwonlyargs, kw_defaults, strict=True): ast gives one kw_default (None for none) per "
                      "keyword-only parameter") for n in (15, 18, 19)},
    "rlcheck.probes.recipe.architecture.x__installed__mutmut_85":
        'the converter read with codec "UTF-8" instead of "utf-8": codec names are case-insensitive',
    "rlcheck.probes.recipe.architecture.x_kept_names__mutmut_13":
        'model_registry\'s source read with codec "UTF-8" instead of "utf-8": codec names are case-insensitive',
    **{f"rlcheck.probes.recipe.architecture.x_kept_names__mutmut_{n}":
       "the names read again (read(models), or read(None)) when the recalled fact is None: it never is here, as "
       "collect is a lambda that returns a dict (or raises) and a kept entry is only loaded when its fact is a dict "
       "(image_facts.complete)" for n in (22, 31)},
    **{f"rlcheck.probes.recipe.architecture.x__trainer_gap__mutmut_{n}":
       "what was compared '' -> 'XXXX' beside a gap: evaluate_architecture reads what was compared only when there is "
       "no gap" for n in (37, 75)},
    # rlcheck/probes/gpu/gpu_smoke.py
    **{f"rlcheck.probes.gpu.gpu_smoke.x__floor__mutmut_{n}":
       "why there is no floor ('' -> a text) when there is one: the caller reads it only when the floor is None"
       for n in (6, 8)},
    **{f"rlcheck.probes.gpu.gpu_smoke.x__run_script__mutmut_{n}":
       "the temporary folder's prefix or the script's file name changed: Python runs the script by its path "
       "whatever it is named, and nothing reads the folder's name" for n in (1, 2, 3, 7, 8)},
    **{f"rlcheck.probes.gpu.gpu_smoke.x__said__mutmut_{n}":
       "the provenance test in _said weakened or its empty answer changed: _said runs only with a floor, so with a "
       "profile, and HardwareProfile refuses a performance floor whose provenance is not written down"
       for n in (2, 3, 6)},
    **{f"rlcheck.probes.cluster.node_health_links.x_evaluate_node_{fn}__mutmut_{n}":
       "the separator of one GPU's WARN reasons changed: _clock_faults and _link_faults give each GPU one WARN "
       "reason at most" for fn, n in (("clocks", 45), ("pcie", 43))},
    # rlcheck/probes/cluster/pairs_driver.py
    **{f"rlcheck.probes.cluster.pairs_driver.x__ranks__mutmut_{n}":
       _STRICT.format("zip(groups, backends, ports, strict=True): ports is built from groups, and both callers pass "
                      "one backend per group") for n in (33, 37, 38)},
    **{f"rlcheck.probes.cluster.pairs_driver.x_run_round__mutmut_{n}":
       _STRICT.format("zip(pairs, backends, ranks, strict=True): backends and ranks are built from pairs")
       for n in (46, 50, 51)},
    **{f"rlcheck.probes.cluster.pairs_driver.x_run_group__mutmut_{n}":
       "the all-nodes round's stand-in pair given other nodes or no backend: run_group reads only the outcome, "
       "bandwidth and detail _result gives back" for n in (38, 39, 40, 46, 47, 48)},
    "rlcheck.probes.cluster.pairs_driver.x__main__mutmut_72":
        "--floor-gbps without default=None: argparse's default is None",
    **{f"rlcheck.probes.cluster.pairs_driver.x__main__mutmut_{n}":
       "the result line printed without flush=True: the child's __main__ flushes stdout itself before os._exit, "
       "and run_pairs reads the child's output only once it has ended" for n in (109, 111, 123)},
    # rlcheck/probes/node/elf.py
    "rlcheck.probes.node.elf.x__needed__mutmut_33":
        "a dynamic entry's tag read unsigned ('<qQ' -> '<QQ'): the three tags compared (0, 1, 5) have the same bits "
        "either way, and every other tag, negative or not, matches none of them under both readings",
    # rlcheck/probes/node/packages.py
    "rlcheck.probes.node.packages.xǁRecordedPackagesǁfrom_file__mutmut_3":
        'read_text(encoding="utf-8") -> encoding=None: the locale\'s encoding, which is UTF-8 wherever the self-tests '
        "run (Python's UTF-8 mode under the C locale); differs only under a non-UTF-8 locale",
    "rlcheck.probes.node.packages.xǁRecordedPackagesǁfrom_file__mutmut_5":
        'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    **{f"rlcheck.probes.node.packages.xǁRecordedPackagesǁrequires__mutmut_{n}":
       "a package absent from the recording's requires read as None (default None or left out) instead of []: "
       "both are no list, and a value that is no list gives [] either way" for n in (3, 5)},
    # rlcheck/probes/node/pair_member.py
    "rlcheck.probes.node.pair_member.x_pick_port__mutmut_4":
        "socket.socket(AF_INET, SOCK_STREAM) -> socket.socket(AF_INET): SOCK_STREAM is the type's default",
    # rlcheck/probes/node/node_stack.py
    **{f"rlcheck.probes.node.node_stack.x_read_stack__mutmut_{n}":
       f"the distribution name {name!r} upper-cased: importlib.metadata matches names case-insensitively (PEP 503 "
       "normalized), so the same distribution answers" for n, name in ((11, "sglang"), (14, "megatron-core"))},
    # rlcheck/probes/node/gpu_health.py
    **{f"rlcheck.probes.node.gpu_health.x_parse_nvlink_errors__mutmut_{n}":
       "the GPU or link index before any header (-1) -> -2 or +1: a counter is kept only while gpu >= 0 and link >= 0, "
       "and a GPU header sets gpu and resets link, so no counter is ever read under the starting link; only the sign "
       "of gpu is tested" for n in (4, 5, 6)},
    "rlcheck.probes.node.gpu_health.x_parse_nvlink_errors__mutmut_18":
        "the link reset at a GPU header -1 -> -2: only link >= 0 is tested, and both are below it",
    **{f"rlcheck.probes.node.gpu_health.x_health_from_texts__mutmut_{n}":
       f"the default {arg} '' -> 'XXXX': text without a GPU, Link, Xid or fallen-off-the-bus line reads as nothing, "
       "as '' does" for n, arg in ((1, "nvlink_e"), (2, "kernel_log"))},
    "rlcheck.probes.node.gpu_health.x_health_from_nvml__mutmut_1":
        "the default kernel_log '' -> 'XXXX': no Xid or fallen-off-the-bus line in it, the same nothing as ''",
    **{f"rlcheck.probes.node.gpu_health.x_collect_gpu_health__mutmut_{n}":
       "the nvidia-smi -q text of a reading not taken '' -> 'XXXX': no 'GPU <bus id>' line in it, so no GPU, as ''"
       for n in (53, 76)},
    "rlcheck.probes.node.gpu_health.x_collect_gpu_health__mutmut_102":
        "the nvlink -e text of a failed call '' -> 'XXXX': no 'GPU n:' line in it, so no counter, as ''",
    "rlcheck.probes.node.gpu_health.x__mhz__mutmut_8":
        "the value of a field not found '' -> 'XXXX': neither starts with a digit, so both read as None",
    "rlcheck.probes.node.gpu_health.x__yes__mutmut_16":
        "an absent yes/no word read as 'XXXX' instead of '': neither is a word of the table, so both read as None",
    "rlcheck.probes.node.gpu_health.x_parse_smi_q__mutmut_2":
        "the section stack before the first GPU [] -> None: every line before the first 'GPU <bus id>' header is "
        "skipped, and that header sets the stack to [] before any line uses it",
    # rlcheck/job/to_recipe.py
    **{f"rlcheck.job.to_recipe.x{name}__mutmut_{n}":
       "Flags.int(FLAG, D) or D -> Flags.int(FLAG, None) or D (or the default left out): int() gives its default "
       "only where the flag has no value, and there the `or D` gives D all the same"
       for name, ns in (("__parallel", (4, 6, 29, 31, 38, 40, 47, 49, 56, 58)),
                        ("__placement", (22, 24, 31, 33, 46, 48)), ("__rollout", (78, 80, 90, 92, 115, 117)),
                        ("_model_of", (58, 60))) for n in ns},
    **{f"rlcheck.job.to_recipe.x__rollout__mutmut_{n}":
       "--n-samples-per-prompt's default 1 -> None (or left out): every reader of n takes `n or 1`" for n in (6, 8)},
    **{f"rlcheck.job.to_recipe.x_read__mutmut_{n}":
       'flags.str("--hf-checkpoint", "") or "" -> default None (or left out): the `or ""` gives "" either way'
       for n in (58, 60)},
    "rlcheck.job.to_recipe.x_train_args__mutmut_5":
        "keep = False -> None before the first flag: only read as a truth value, and both are false",
    **{f"rlcheck.job.to_recipe.x__identity__mutmut_{n}":
       _STRICT.format("zip(_DIMS, the model's four dims): both four long") for n in (5, 8, 9)},
    **{f"rlcheck.job.to_recipe.x_model_of__mutmut_{n}":
       _STRICT.format("zip(_DIMS, dims): dims is read flag by flag from _DIMS") for n in (38, 41, 42)},
    # rlcheck/job/needs.py
    "rlcheck.job.needs.x_wants_arguments__mutmut_3":
        'the code\'s lines joined with "XX\\nXX" instead of "\\n": a $1, $# or ${1 lies within one line and no line '
        "ends inside a single-quoted part (it stops at a newline), so the added text makes and breaks no match",
    "rlcheck.job.needs.x_wants_arguments__mutmut_25":
        'no usage line read as None instead of "": only read as a truth value, and both are false',
    # rlcheck/job/rayjob.py
    **{f"rlcheck.job.rayjob.x__gpus__mutmut_{n}":
       "a pod spec without containers read as None (default None or left out) instead of []: the `or [{}]` after it "
       "gives one empty container either way" for n in (23, 28)},
    **{f"rlcheck.job.rayjob.x__version__mutmut_{n}":
       'a head container without an image (or a head not there) read as "None" or "XXXX" instead of "": none of '
       "them names slime or miles with a version, so each is no version" for n in (15, 17, 20, 22)},
    # rlcheck/job/submit.py
    **{f"rlcheck.job.submit.x_from_submit__mutmut_{n}":
       "a valued option's value when it is the last word or past it: no word is left for an entrypoint, so "
       "`ray job submit` has no entrypoint is raised before any option's value is read" for n in (29, 31)},
    # rlcheck/framework/patch_flags.py
    "rlcheck.framework.patch_flags.x_component__mutmut_8":
       'a patch read with encoding "utf-8" -> "UTF-8": codec names are case-insensitive (Python looks both up as the '
       "one utf_8 codec)",
    # rlcheck/framework/argv.py
    "rlcheck.framework.argv.x_evaluate__mutmut_24":
       'a PASS verdict\'s details joined with "XX\\nXX" instead of "\\n": a PASS has no finding, so its notes hold at '
       "most one line (every opaque option named in one), and one line joins alike with any separator",
    # rlcheck/framework/schema.py
    **{f"rlcheck.framework.schema.x__flags__mutmut_{n}":
       'a component read with encoding "utf-8" -> None or "UTF-8": codec names are case-insensitive, and the '
       "committed components are ASCII JSON (json.dump's ensure_ascii), which every locale codec decodes alike"
       for n in (3, 9)},
    **{f"rlcheck.framework.schema.x_component_of__mutmut_{n}":
       _STRICT.format("zip(from_argparse's options, the parser's actions with option strings): from_argparse keeps "
                      "every such action but --help, which a parser without add_help lacks") for n in (23, 26, 27)},
    "rlcheck.framework.schema.x_component_of__mutmut_30":
        'getattr(action, "explicit_dest", False) -> default None: only read as a truth value, and both are false',
    "rlcheck.framework.schema.x__kind__mutmut_36":
        "a type given by a bare name read by ast.unparse instead of its id: unparse of a Name is its id",
    "rlcheck.framework.schema.x_skip_lists__mutmut_9": 'encoding "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.framework.schema.x_extract_file__mutmut_6":
        'a source read with encoding "utf-8" -> "UTF-8": codec names are case-insensitive',
    **{f"rlcheck.framework.schema.x__calls__mutmut_{n}":
       'the receiver of an add_argument on no plain name (self.parser, a call\'s result) is None or "XXXX" instead '
       'of "": extract_file only compares it with "temp_parser" and "reset_arg", which none of the three is'
       for n in (12, 18)},
    "rlcheck.framework.schema.x__literal__mutmut_2":
        "literal_eval also called on a missing node (None): ast.literal_eval(None) raises ValueError ('malformed "
        "node or string'), which _literal catches, answering None as the dropped test did",
    # rlcheck/job/job.py
    "rlcheck.job.job.x_framework_of__mutmut_4":
        'the trainer path, script and working dir joined with "XX XX" instead of " ": the X\'s make no "miles" or '
        '"slime" across a boundary and break none within a word',
    "rlcheck.job.job.x_framework_of__mutmut_7":
        'no working dir read as "XXXX" instead of "": it names neither framework',
    # rlcheck/job/script.py
    **{f"rlcheck.job.script.x__ray_start_gpus__mutmut_{n}":
       '--num-gpus=N\'s value split at every "=" (or the last) instead of the first: it is read only once the part '
       "after the first = is all digits, so there is no second =" for n in (39, 40, 42)},
    **{f"rlcheck.job.script.x_{name}__mutmut_{n}":
       'decode("utf-8", ...) -> decode(...) or "UTF-8": UTF-8 is the default codec, and codec names are '
       "case-insensitive" for name, ns in (("_text", (3, 9)), ("_slime_launcher", (4, 10)), ("tree_of", (27, 33)))
       for n in ns},
    # rlcheck/job/miles_stub.py
    **{f"rlcheck.job.miles_stub.x__bool_env__mutmut_{n}":
       'the default "false" -> "XXfalseXX" or "FALSE": neither is one of the true words, as "false" is not'
       for n in (1, 2)},
    "rlcheck.job.miles_stub.x__coredump__mutmut_4":
        "a config without cuda_core_dump read as None instead of False: `not` of either is True",
    **{f"rlcheck.job.miles_stub.x_{name}__mutmut_{n}":
       'open(..., encoding="utf-8") -> encoding None, left out or "UTF-8": the locale\'s encoding, which is UTF-8 '
       "wherever the stub runs (Python's UTF-8 mode under the C locale), and codec names are case-insensitive"
       for name, ns in (("_nodes", (3, 6, 12)), ("_record", (5, 8, 14))) for n in ns},
    **{f"rlcheck.job.miles_stub.x_cli_values__mutmut_{n}":
       'a word without -- read as name "XXXX" (or eq / value "XXXX") instead of "": no field is named XXXX, so the '
       "same error names the word before eq or the value is read" for n in (23, 24, 25)},
    **{f"rlcheck.job.miles_stub.x_execute_train_npu__mutmut_{n}":
       "the NPU launch's megatron_path default changed: the NPU image's runtime env has no PYTHONPATH, so the path is "
       "never read" for n in (3, 4, 5)},
    **{f"rlcheck.job.miles_stub.x_{name}__mutmut_{n}":
       'a config without extra_env_vars read as None instead of "": the `or ""` after it gives "" either way'
       for name, n in (("execute_train_npu", 60), ("resolve_extra_env_vars", 5))},
    "rlcheck.job.miles_stub.x_field_value__mutmut_23":
        "a type (not a string) also looked up in the table of type names: .get(kind, kind) gives the type back",
    "rlcheck.job.miles_stub.x__import_model_file__mutmut_31":
        "assert spec and spec.loader -> spec or spec.loader: both callers pass a <model_type>.py path, for which "
        "spec_from_file_location always gives a spec with its SourceFileLoader (it picks the loader by the .py "
        "suffix), so both forms hold",
    "rlcheck.job.miles_stub.x__impure__mutmut_12": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.job.miles_stub.x__impure__mutmut_21":
        'node.module or "" -> or "XXXX": read only when node.level is 0, and an absolute `from X import y` always '
        "has its module X (only a relative `from . import y` has none), so the `or` never gives its right side",
    "rlcheck.job.miles_stub.x__pure_source__mutmut_33":
        "folder.joinpath(*tail.split('.')) also when tail is '': ''.split('.') is [''], and joinpath('') is the "
        "folder itself, what the else gives",
    **{f"rlcheck.job.miles_stub.x_field_value__mutmut_{n}":
       'a type name the table lacks read as None (or "str" itself left as the string "str") instead of the name: '
       "none of them is bool, int or float, so the raw value is returned either way" for n in (25, 26, 27, 34, 35)},
    # rlcheck/job/corpus.py
    "rlcheck.job.corpus.x_capture_one__mutmut_49":
        'doc.pop("source", None) -> doc.pop("source"): Job.to_dict always holds source, so no KeyError is possible',
    **{f"rlcheck.job.corpus.x_{name}__mutmut_{n}":
       'encoding="utf-8" -> None, left out or "UTF-8": the locale\'s encoding, which is UTF-8 wherever the builder '
       "runs (Python's UTF-8 mode under the C locale), and codec names are case-insensitive"
       for name, ns in (("launch_files", (24, 26, 29)), ("main", (81, 83, 98, 100, 112))) for n in ns},
    **{f"rlcheck.job.corpus.x_main__mutmut_{n}":
       "json.dumps(sort_keys=False) -> sort_keys None or left out: False is the default" for n in (104, 107)},
    **{f"rlcheck.job.miles_stub.x__bash__mutmut_{n}":
       "subprocess.run(check=False) -> check None or left out: False is the default" for n in (11, 15)},
    "rlcheck.job.miles_stub.x__bash__mutmut_25":
        "the command's stdout returned also when it was not captured: it is None then, as the function returns",
    **{f"rlcheck.job.job.xǁJobǁfrom_dict__mutmut_{n}":
       'a captured Job without an entrypoint searched for redaction markers as "None" or "XXXX" instead of "": none '
       "of them holds a marker, so no place is found either way" for n in (107, 109, 112)},
    "rlcheck.job.needs.x_wants_arguments__mutmut_15":
        'a single-quoted part replaced by "XX XX" instead of " ": either way a $ before it is followed by a character '
        "that is no digit, #, @, * or {, and no $ is made, so a positional argument is found or missed alike",
    # rlcheck/deploy/node_metrics.py
    "rlcheck.deploy.node_metrics.x__worst__mutmut_6":
        "a check's verdict of the same rank as its worst one so far replaces it (<= for <): the same status either way",
    "rlcheck.deploy.node_metrics.x_write_textfile__mutmut_25": 'codec "utf-8" -> "UTF-8": codec names are '
        "case-insensitive",
    # rlcheck/scan_output.py
    **{f"rlcheck.scan_output.x_first_cause__mutmut_{n}":
       "min() of (rank, index, finding) without the key that keeps (rank, index): the indexes differ, so the finding "
       "is never compared and the same one is least" for n in (11, 13)},
    **{f"rlcheck.scan_output.x_first_cause__mutmut_{n}":
       "the rank of a role _RANK does not know changed (None, left out, 1): KnownFailure refuses any role outside "
       "ROLES, and _RANK ranks every one of them, so the default is never taken" for n in (3, 5, 6)},
    **{f"rlcheck.scan_output.x_safe__mutmut_{n}":
       "the \\x escape also for U+0100 (<= 0x100, < 257): _UNSAFE matches no character from U+00A0 to U+2027, so "
       "U+0100 never reaches the escape" for n in (10, 11)},
    # rlcheck/plugin/cache.py
    "rlcheck.plugin.cache.xǁReproCacheǁpytest_unconfigure__mutmut_1":
        'image_facts.switch_off("") -> switch_off(None): the switch is only read as true or false (folder() is off '
        "when it is set), and None and the empty text are both false",
    # rlcheck/scan_input.py
    "rlcheck.scan_input.x__read_head__mutmut_3":
        "the head's loop also runs with the head full (<= for <): it then reads 0 bytes, gets b'' and stops",
    **{f"rlcheck.scan_input.x_decompressed__mutmut_{n}":
       "the read buffer's size changed (8 KiB default, 40 bytes, 2 MiB, 3**20 bytes): it sets how many bytes each "
       "read asks the stream for, never which bytes are read or in what order" for n in (9, 14, 15, 16)},
    **{f"rlcheck.scan_input.x_decompressed__mutmut_{n}":
       "typing.cast(None, x) for cast(BinaryIO, x): cast returns x unchanged whatever type it names"
       for n in (20, 27, 40, 53, 65)},
    **{f"rlcheck.scan_input.x_decompressed__mutmut_{n}":
       'the reader\'s mode "rb" left out or None: BZ2File and LZMAFile read by default, and GzipFile without a mode '
       "takes the file object's, which the buffered reader over _Prefixed (no mode of its own) lacks, so 'rb'"
       for n in (32, 34, 47, 60)},
    # rlcheck/deploy/yaml_text.py (dump is dump_all of the one document, so the options are written once)
    "rlcheck.deploy.yaml_text.x_dump_all__mutmut_3":
        "safe_dump_all(sort_keys=False) -> sort_keys=None: PyYAML's representer reads sort_keys only as `if "
        "self.sort_keys:` (sorting when true), and None is false as False is",
    # rlcheck/scan_engines.py: RegexFinder's search bounds
    **{f"rlcheck.scan_engines.xǁRegexFinderǁ_first__mutmut_{n}": "_first's 'nothing found' -1 -> -2: its one caller, "
       "anchors, reads it only as `>= 0`" for n in (13, 36)},
    "rlcheck.scan_engines.xǁRegexFinderǁ_first__mutmut_14":
        "while pos < length -> <= length: _first is called only with pos < length (anchors' loop tests it first), and "
        "it steps pos only while pos + window < length, so pos never equals length there",
    **{f"rlcheck.scan_engines.xǁRegexFinderǁ_first__mutmut_{n}": "the last window's test (pos + window >= length) "
       "weakened (- window, or > for >=): the extra windows searched are [pos', length) inside the one just searched "
       "without a hit, and re matches at a position whatever the search's start (^, \\A and lookbehind see the whole "
       "block), so they find nothing either and -1 comes back" for n in (29, 30)},
    **{f"rlcheck.scan_engines.xǁRegexFinderǁanchors__mutmut_{n}": "the line end looked for past length (find without "
       "its length bound): a newline before length is found alike, and one at or past length puts pos past length, "
       "where the loop ends as it does when pos is length" for n in (17, 20)},
    **{f"rlcheck.scan_engines.x__database__mutmut_{n}": "Database.compile's ids=list(range(n)) or elements=n left "
       "out (or ids=None): python-hyperscan (0.9.1 here) numbers the expressions 0..n-1 when ids is None and counts "
       "them itself when elements is None, the very values given (checked: 300 patterns each report their index)"
       for n in (4, 8, 9)},
    "rlcheck.scan_engines.x_cache_dir__mutmut_14":
        "XDG_CACHE_HOME's default '' -> 'XXXX': it is read only through os.path.isabs, false for both, so the cache "
        "goes under ~/.cache either way",
    # rlcheck/scan_engines.py: the cache of compiled databases (the CPU's features, read_cached)
    "rlcheck.scan_engines.x__cpu_features__mutmut_10":
        'open(encoding="ascii") -> "ASCII": codec names are looked up case-insensitively, the same codec',
    "rlcheck.scan_engines.x_read_cached__mutmut_24":
        "os.fdopen(closefd=False) -> closefd=None: io.open reads closefd as a truth value (None is false, checked on "
        "3.12), so the file object leaves fd open either way and the finally closes it once",
    "rlcheck.scan_engines.x_read_cached__mutmut_41":
        "the short-file test len(data) < len(head) + 65 -> len(head) - 65 (never true after startswith(head)): a "
        "file shorter than head + 65 has no byte at head + 64, so the next test (that byte must be the checksum's "
        "newline) finds b'' there and returns None alike",
    "rlcheck.scan_engines.xǁHyperscanFinderǁ__init____mutmut_16":
        "the pieces' database compiled with MULTILINE & SINGLEMATCH (0) for MULTILINE | SINGLEMATCH: MULTILINE only "
        "moves ^ and $ to the line ends inside the data, and ids_in is only given one line's bytes (Finder.ids_in: "
        "one bounded piece of one line; Matcher cuts its pieces between newlines, and its callers' lines have none), "
        "where ^ and $ are the data's ends either way; SINGLEMATCH only stops repeat reports of an id, which the set "
        "holds once anyway",
    # HyperscanFinder.anchors: the halt after MATCHES_PER_LINE skipped matches only saves time
    _HS + "5":
        "line_end's start -1 -> -2: every match ends at 0 or later (pos + to - 1 >= 0), above both, so the first "
        "match is kept either way",
    **{f"{_HS}{n}": "skipped's start 0 -> 1 at the scan's start or its resume: the first match of a (re)scan ends past "
       "line_end (the scan starts after it), so it is kept and skipped is reset to 0 before any skip is counted"
       for n in (6, 43)},
    **{f"{_HS}{n}": "the halt's count changed (skipped = 1, -= 1, += 2, > for >=, reset to 1): a halt stops the "
       "scan in a line whose first match is already kept and resumes at the next line, where the unhalted scan "
       "skips the same matches (they end at or before line_end): the anchors are the same, only the time differs"
       for n in (12, 13, 14, 15, 26)},
    _HS + "32":
        "return True after each kept match: the scan halts after every line's first match and resumes at the next "
        "line (or ends past length), the anchors the unhalted scan gives by skipping the rest of that line",
    **{f"{_HS}{n}": "the line end looked for past length (find without its length bound): a newline before length is "
       "found alike; otherwise line_end is at or past length instead of length, and every later match ends before "
       "length (skipped alike) while a halt resumes past length (the loop ends alike)" for n in (20, 23)},
    _HS + "33":
        "while pos < length -> <= length: pos is length only after a halt in a line whose newline is the last "
        "byte, and the scan of the empty rest finds nothing (Hyperscan refuses a pattern that matches empty) and "
        "breaks",
    # rlcheck/cluster/fanout.py: what _answer does not read
    "rlcheck.cluster.fanout.x_fan_out_connected__mutmut_104":
        "_answer(node, ref, None, deadline) -> _answer(node, None, None, deadline) for a task past the deadline: "
        "with done_s None, _answer returns the timeout answer before it reads ref",
    "rlcheck.cluster.fanout.x_fan_out_connected__mutmut_89":
        "_answer(node, ref, done_s, deadline_s) -> (..., done_s, None) for a task that is done: _answer reads "
        "node_timeout_s only when done_s is None, and here done_s is round() of a float, never None",
    # rlcheck/plugin/resources.py
    "rlcheck.plugin.resources.x_require_ray__mutmut_6":
        "found = False -> None where find_spec raised: it is only read by `if not found`, and both are false",
    "rlcheck.plugin.resources.x_wants_early_ray__mutmut_10":
        'getattr(config.option, "collectonly", False) -> default None: the value is only read as true or false, and '
        "both defaults are false",
    "rlcheck.plugin.resources.x_after_early_ray__mutmut_8":
        "config.stash.get(decided_key, False) -> default None: the value is only read as true or false, and both "
        "defaults are false",
    # rlcheck/plugin/progress.py
    "rlcheck.plugin.progress.x_process_started__mutmut_23":
        "0.0 <= age -> 0.0 < age: at age 0 both branches give clock() (clock() - 0.0 and clock())",
    "rlcheck.plugin.progress.xǁWriterǁ__init____mutmut_17":
        "os.set_blocking(fd, False) -> set_blocking(fd, None): the flag is read as true or false, and None is false",
    # rlcheck/deploy/k8s_manifests.py
    "rlcheck.deploy.k8s_manifests.x_node_status_daemonset__mutmut_153":
        "the metrics volume added when its mount or its volume is there (or for and): _metrics gives both or, "
        "without a metrics_dir, neither",
    # rlcheck/cli_baseline.py
    "rlcheck.cli_baseline.x_add_baseline__mutmut_72": "-o/--out's default=None left out: argparse's default is None",
    "rlcheck.cli_baseline.x_cmd_baseline__mutmut_49":
        "exc.args[0] for every refusal, not only KeyError's: each exception the handler catches (BaselineError, "
        "ValueError, ProfileError) is raised by rlcheck with its message as its one argument, so args[0] is its str",
    **{f"rlcheck.cli_baseline.x_cmd_baseline__mutmut_{n}":
       'the baseline file written with encoding None / absent / "UTF-8" for "utf-8": codec names are '
       "case-insensitive, and the locale's encoding is UTF-8 here (Python's UTF-8 mode under the C locale the "
       "mutation run has); differs only under a non-UTF-8 locale" for n in (55, 57, 60)},
    # rlcheck/cli_k8s.py
    **{f"rlcheck.cli_k8s.x__apply__mutmut_{n}":
       "_apply's first value 'api' changed: the caller only compares it with 'kubectl'" for n in (48, 49)},
    "rlcheck.cli_k8s.x_add_k8s__mutmut_19":
        "add_subparsers' parser_class=type(p) left out: argparse's default parser_class is type(p) already",
    **{f"rlcheck.cli_k8s.x_cmd_apply_node_status__mutmut_{n}":
       "patch_from_report's source (None, 'None'): it names the file only in the refusal of a text that is not a "
       "report, and report_verdicts has read the same text with the right source just before and refused it first"
       for n in (19, 26)},
    **{f"rlcheck.cli_k8s.x_cmd_apply_node_status__mutmut_{n}":
       'the report read with encoding None / "UTF-8" for "utf-8": codec names are case-insensitive, and the '
       "locale's encoding is UTF-8 here (Python's UTF-8 mode under the C locale the mutation run has)" for n in (5, 7)},
    # rlcheck/data_types.py
    **{f"rlcheck.data_types.x__where__mutmut_{n}":
       "next(...) without its None default: _where is called only for a value that does not conform, and a value of "
       "the kind's own container that does not conform holds an element that does not, so next always finds one"
       for n in (17, 33)},
    "rlcheck.data_types.x__where__mutmut_3": 'kind.rpartition("[") for partition: a kind holds at most one "["',
    "rlcheck.data_types.x__where__mutmut_8":
        'element.rstrip("XX]XX") for rstrip("]"): it strips X as well, and no element name (str, number, table) '
        "ends in X",
    # rlcheck/field_corpus.py
    **{f"rlcheck.field_corpus.x_load__mutmut_{n}":
       'the corpus read with encoding None / "UTF-8" for "utf-8": codec names are case-insensitive, and the '
       "locale's encoding is UTF-8 here (Python's UTF-8 mode under the C locale the mutation run has)" for n in (3, 5)},
    # rlcheck/plugin/heartbeat.py, rlcheck/preflight/docs.py
    "rlcheck.plugin.heartbeat.x_serve__mutmut_17":
        "os.read's size 65536 -> 65537: it only bounds one read; feed keeps a line torn across reads, so the events "
        "applied are the same",
    "rlcheck.preflight.docs.x_with_checks_table__mutmut_9":
        "end < start -> end <= start: the two markers are different texts, so they never start at one index",
    **{f"rlcheck.preflight.docs.x_write_readme__mutmut_{n}":
       'the README read or written with encoding None / absent / "UTF-8" for "utf-8": codec names are '
       "case-insensitive, and the locale's encoding is UTF-8 here (Python's UTF-8 mode under the C locale the "
       "mutation run has)" for n in (2, 4, 9, 11, 13)},
    # rlcheck/process/warm_server.py, rlcheck/process/warm.py
    "rlcheck.process.warm.xǁServerǁrun__mutmut_56":
        "_answers.pop(request_id) without its None default: this run put its own id there and only this run takes "
        "it out, so the key is always present",
    # rlcheck/cli.py
    "rlcheck.cli.x_build_parser__mutmut_23":
        "the subcommands' parser_class=_Parser dropped: argparse's own error() prints the usage to stderr and exits 2 "
        "with '<prog>: error: <message>', word for word what _Parser.error does (EXIT_USAGE is 2); rlcheck job's "
        "parser is made a _JobParser explicitly either way",
    **{f"rlcheck.cli.x_cmd_docs__mutmut_{n}": 'codec "utf-8" -> "UTF-8": codec names are case-insensitive'
       for n in (17, 23, 30)},
    **{f"rlcheck.cli.x_cmd_docs__mutmut_{n}": 'the docs\' read_text / write_text encoding="utf-8" -> the locale\'s '
       "(None, absent): UTF-8 wherever the self-tests run (Python's UTF-8 mode under the C locale the mutation run "
       "has, or a UTF-8 locale); differs only under a non-UTF-8 locale" for n in (11, 21, 26, 28)},
    "rlcheck.cli.x_cmd_job__mutmut_38": 'the Job file\'s codec "utf-8" -> "UTF-8": codec names are case-insensitive',
    "rlcheck.cli.x_cmd_job__mutmut_35":
        'the Job file\'s write_text encoding="utf-8" dropped: the locale\'s encoding, UTF-8 wherever the self-tests '
        "run (Python's UTF-8 mode under the C locale the mutation run has), and json_dumps writes ASCII-escaped JSON",
    "rlcheck.cli.x_cmd_job__mutmut_33":
        'the Job file\'s write_text encoding="utf-8" -> None: the locale\'s encoding, UTF-8 wherever the self-tests '
        "run (Python's UTF-8 mode under the C locale the mutation run has), and json_dumps writes ASCII-escaped JSON",
    # rlcheck/cli_run.py
    "rlcheck.cli_run.x_cmd_slurm__mutmut_19":
        'the --report file read with encoding "UTF-8" instead of "utf-8": codec names are case-insensitive',
    # rlcheck/fixes/tms_preload.py
    "rlcheck.fixes.tms_preload.x_main__mutmut_25":
        "--folder's default=None dropped: argparse's default for an option is None",
    # rlcheck/framework/schema.py
    "rlcheck.framework.schema.x_default_dest__mutmut_8":
        "a long flag of more than 2 characters instead of more than 1: the only 2-character flag whose second is "
        "'-' is '--', which argparse refuses without an explicit dest ('dest= is required'), and an explicit "
        "dest is read before default_dest",
    # rlcheck/repro/ahead.py
    "rlcheck.repro.ahead.xǁAheadǁstart__mutmut_24":
        "pool.shutdown(wait=False) -> wait=None: shutdown only tests wait for truth, and None is false as False",
    "rlcheck.repro.ahead.x_running__mutmut_4":
        "getoption('quick', default=False) -> default=None: the value is read through bool(), and bool(None) is False",
}
