"""Rule table for the field corpus (rlcheck.field_corpus): which rows load and the whole refusal of each that does not,
how the scanner's replay is counted (found, missed, claimed, a failure line that also names another entry, a row of
several lines read line by line), and the docs section's every line (recall and precision, both at 0 lines, the
per-entry table sorted, a missed line cut at 120 characters, each overlap). The lines are the catalogue's own
examples: which entry each names is the scanner's to say, and tests/test_catalog_field.py replays the real corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlcheck import catalog, field_corpus
from rlcheck.field_corpus import CorpusScore, FieldLine
from rlcheck.scan import Matcher

ENTRIES = catalog.load_catalog()
MATCHER = Matcher(ENTRIES)
PG = "Waiting for placement group of 20 GPUs (elapsed 1800s): 16 GPUs registered with Ray, 16 available."
STORE = "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 4/8 clients joined."
HEALTHY = "step 12: loss 0.41, grad norm 1.2"


def test_the_lines_name_what_the_table_says():
    assert MATCHER.match_line(PG) == ["placement-group-oversubscribed"]
    assert MATCHER.match_line(STORE) == ["engine-larger-than-node"]
    assert MATCHER.match_line(HEALTHY) == []


# --- load ------------------------------------------------------------------------------------------------------------


def _load(tmp_path: Path, body: str) -> tuple[FieldLine, ...]:
    path = tmp_path / "corpus.toml"
    path.write_text(body, encoding="utf-8")
    return field_corpus.load(path)


def test_rows_load_failures_first_then_healthy(tmp_path):
    got = _load(tmp_path, '[[healthy]]\nsource = "h"\nline = "ok"\n[[failure]]\nsource = "s1"\nline = "l1"\nid = "a"\n'
                          '[[failure]]\nsource = "s2"\nline = "l2"\nid = "b"\n')
    assert got == (FieldLine(source="s1", line="l1", expected="a"), FieldLine(source="s2", line="l2", expected="b"),
                   FieldLine(source="h", line="ok", expected=""))


def test_an_empty_corpus_or_one_kind_alone_loads(tmp_path):
    assert _load(tmp_path, "") == ()
    assert _load(tmp_path, '[[healthy]]\nsource = "h"\nline = "ok"\n') == (FieldLine(source="h", line="ok",
                                                                                        expected=""),)


@pytest.mark.parametrize(("body", "message"), [
    ('[[other]]\nx = 1\n[[extra]]\ny = 2\n', "unknown tables ['extra', 'other']: only [[failure]] and [[healthy]]"),
    ('[[failure]]\nsource = "s"\nline = "l"\n',
     "[[failure]] {'source': 's', 'line': 'l'}: needs exactly ['id', 'line', 'source'], non-empty strings"),
    ('[[failure]]\nsource = "s"\nline = "l"\nid = ""\n',
     "[[failure]] {'source': 's', 'line': 'l', 'id': ''}: needs exactly ['id', 'line', 'source'], non-empty strings"),
    ('[[failure]]\nsource = "s"\nline = "l"\nid = 3\n',
     "[[failure]] {'source': 's', 'line': 'l', 'id': 3}: needs exactly ['id', 'line', 'source'], non-empty strings"),
    ('[[failure]]\nsource = "s"\nline = "l"\nid = "a"\nnote = "n"\n',
     "[[failure]] {'source': 's', 'line': 'l', 'id': 'a', 'note': 'n'}: needs exactly ['id', 'line', 'source'], "
     "non-empty strings"),
    ('[[healthy]]\nsource = "s"\nline = "l"\nid = "a"\n',
     "[[healthy]] {'source': 's', 'line': 'l', 'id': 'a'}: needs exactly ['line', 'source'], non-empty strings"),
    ('[[healthy]]\nsource = ""\nline = "l"\n',
     "[[healthy]] {'source': '', 'line': 'l'}: needs exactly ['line', 'source'], non-empty strings"),
    ('[[healthy]]\nsource = "s"\nline = ""\n',
     "[[healthy]] {'source': 's', 'line': ''}: needs exactly ['line', 'source'], non-empty strings"),
    ('[[healthy]]\nsource = "s"\nline = ["l"]\n',
     "[[healthy]] {'source': 's', 'line': ['l']}: needs exactly ['line', 'source'], non-empty strings"),
])
def test_a_bad_row_is_refused_naming_the_file_and_the_row(tmp_path, body, message):
    with pytest.raises(ValueError) as exc:
        _load(tmp_path, body)
    assert str(exc.value) == f"corpus.toml: {message}"


def test_the_shipped_corpus_loads():
    lines = field_corpus.load()
    assert field_corpus.CORPUS_FILE.name == "field_corpus.toml" and lines
    assert all(x.source and x.line for x in lines)


# --- score -----------------------------------------------------------------------------------------------------------


def _fail(line: str, expected: str, source: str = "s") -> FieldLine:
    return FieldLine(source=source, line=line, expected=expected)


def _ok(line: str, source: str = "h") -> FieldLine:
    return FieldLine(source=source, line=line, expected="")


@pytest.mark.parametrize(("lines", "counts"), [
    # (failures, found, healthy, claimed, wrong)
    ((), (0, 0, 0, 0, 0)),
    ((_fail(PG, "placement-group-oversubscribed"),), (1, 1, 0, 0, 0)),
    ((_fail(HEALTHY, "placement-group-oversubscribed"),), (1, 0, 0, 0, 0)),
    ((_ok(HEALTHY),), (0, 0, 1, 0, 0)),
    ((_ok(PG),), (0, 0, 1, 1, 0)),
    # a line of another entry: missed, and it named a wrong one
    ((_fail(STORE, "placement-group-oversubscribed"),), (1, 0, 0, 0, 1)),
    # a row of two lines: each is read alone, and both entries are named (one right, one wrong)
    ((_fail(f"{PG}\n{STORE}", "placement-group-oversubscribed"),), (1, 1, 0, 0, 1)),
    ((_ok(f"{HEALTHY}\n{STORE}"),), (0, 0, 1, 1, 0)),
    ((_fail(PG, "placement-group-oversubscribed"), _fail(STORE, "engine-larger-than-node"), _ok(HEALTHY), _ok(PG),
      _ok(STORE)), (2, 2, 3, 2, 0)),
])
def test_the_replay_is_counted(lines, counts):
    got = field_corpus.score(lines, ENTRIES)
    assert (got.failures, got.found, got.healthy, got.claimed, got.wrong) == counts


def test_the_replay_uses_the_catalogue_it_is_given():
    """A line of an entry the given catalogue lacks names nothing: the score is of that catalogue, not the shipped."""
    only_pg = {"placement-group-oversubscribed": ENTRIES["placement-group-oversubscribed"]}
    got = field_corpus.score((_fail(STORE, "engine-larger-than-node"), _fail(PG, "placement-group-oversubscribed")),
                             only_pg)
    assert (got.found, got.wrong, [x.line for x in got.missed]) == (1, 0, [STORE])


def test_missed_lines_and_overlaps_are_listed_in_order():
    missed_a, missed_b = _fail(HEALTHY, "cuda-oom", "a"), _fail(STORE, "placement-group-oversubscribed", "b")
    both = _fail(f"{STORE}\n{PG}", "placement-group-oversubscribed", "c")
    got = field_corpus.score((missed_a, _fail(PG, "placement-group-oversubscribed"), missed_b, both), ENTRIES)
    assert got.missed == (missed_a, missed_b)
    assert got.overlaps == ("b (placement-group-oversubscribed) also named engine-larger-than-node",
                            "c (placement-group-oversubscribed) also named engine-larger-than-node")


def test_an_overlap_lists_every_other_entry_sorted():
    line = _fail(f"{STORE}\n{PG}", "cuda-oom", "d")
    got = field_corpus.score((line,), ENTRIES)
    assert got.overlaps == ("d (cuda-oom) also named engine-larger-than-node, placement-group-oversubscribed",)
    assert (got.wrong, got.missed) == (1, (line,))


# --- the docs section ------------------------------------------------------------------------------------------------

HEAD = ["", "## Field corpus", "",
        "Generated from `rlcheck/data/field_corpus.toml`: log lines users posted in SLIME's, Miles' and SGLang's "
        "trackers (source beside each), replayed through the scanner.", ""]


def test_the_section_of_a_corpus_with_a_miss_a_claim_and_an_overlap():
    lines = (_fail(PG, "placement-group-oversubscribed", "a"), _fail(PG, "placement-group-oversubscribed", "b"),
             _fail(STORE, "engine-larger-than-node", "c"), _fail("x" * 130, "cuda-oom", "d"), _ok(HEALTHY), _ok(PG))
    result = field_corpus.score(lines, ENTRIES)
    assert field_corpus.markdown(result, lines) == [
        *HEAD,
        "- failure lines: 4, named their entry: 3 (recall 0.75)",
        "- healthy and look-alike lines: 2, named an entry: 1 (precision 0.75)",
        "- failure lines that also named a wrong entry: 0", "",
        "| entry | lines |", "|---|---|",
        "| [cuda-oom](#cuda-oom) | 1 |", "| [engine-larger-than-node](#engine-larger-than-node) | 1 |",
        "| [placement-group-oversubscribed](#placement-group-oversubscribed) | 2 |",
        f"- missed: `{'x' * 120}` (d, expected cuda-oom)",
    ]


def test_the_section_lists_each_overlap():
    lines = (_fail(f"{PG}\n{STORE}", "placement-group-oversubscribed", "a"),)
    result = field_corpus.score(lines, ENTRIES)
    assert field_corpus.markdown(result, lines)[5:] == [
        "- failure lines: 1, named their entry: 1 (recall 1.00)",
        "- healthy and look-alike lines: 0, named an entry: 0 (precision 1.00)",
        "- failure lines that also named a wrong entry: 1", "",
        "| entry | lines |", "|---|---|",
        "| [placement-group-oversubscribed](#placement-group-oversubscribed) | 1 |",
        "- overlap: a (placement-group-oversubscribed) also named engine-larger-than-node",
    ]


@pytest.mark.parametrize(("score", "recall", "precision"), [
    (CorpusScore(failures=0, found=0, healthy=0, claimed=0, wrong=0, missed=()), "0.00", "0.00"),
    (CorpusScore(failures=3, found=0, healthy=2, claimed=0, wrong=0, missed=()), "0.00", "0.00"),
    (CorpusScore(failures=0, found=0, healthy=2, claimed=2, wrong=0, missed=()), "0.00", "0.00"),
    (CorpusScore(failures=3, found=1, healthy=2, claimed=0, wrong=0, missed=()), "0.33", "1.00"),
    (CorpusScore(failures=3, found=2, healthy=2, claimed=2, wrong=0, missed=()), "0.67", "0.50"),
])
def test_recall_and_precision_with_nothing_to_divide_by(score, recall, precision):
    got = field_corpus.markdown(score, ())
    assert got[5] == f"- failure lines: {score.failures}, named their entry: {score.found} (recall {recall})"
    assert got[6] == (f"- healthy and look-alike lines: {score.healthy}, named an entry: {score.claimed} "
                      f"(precision {precision})")
    assert got[:5] == HEAD and got[7:] == [
        f"- failure lines that also named a wrong entry: {score.wrong}", "", "| entry | lines |", "|---|---|"]
