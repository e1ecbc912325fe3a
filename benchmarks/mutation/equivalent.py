"""Surviving mutants that are equivalent: the mutated code behaves the same on every input, so no test can
turn it red. Each entry is the mutant's name (as `mutmut results` lists it) and why it is equivalent.

A name is the function plus mutmut's running number within it: an edit to that function renumbers its
mutants, so re-check the entries of a function whenever it changes (`mutmut show NAME` prints the diff).
"""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
}
