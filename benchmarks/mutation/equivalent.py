"""Surviving mutants that are equivalent: the mutated code behaves the same on every input, so no test can
turn it red. Each entry is the mutant's name (as `mutmut results` lists it) and why it is equivalent.

A name is the function plus mutmut's running number within it: an edit to that function renumbers its
mutants, so re-check the entries of a function whenever it changes (`mutmut show NAME` prints the diff).
"""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    # rlcheck/reward/payload.py
    "rlcheck.reward.payload.x__prompt_messages__mutmut_8":
        'default prompt "" -> "XXXX": only the default\'s type is read (any string prompt counts 0 messages)',
    "rlcheck.reward.payload.x_parse_payload__mutmut_4":
        'codec "utf-8" -> "UTF-8": Python\'s codec names are case-insensitive',
    "rlcheck.reward.payload.x_read_body__mutmut_8":
        'header "content-length" -> "CONTENT-LENGTH": Starlette\'s Headers.get lowercases the key',
    "rlcheck.reward.payload.x_read_body__mutmut_9":
        'default Content-Length "" -> "XXXX": both fail isdigit(), so both mean "not declared"',
}
