"""Rule table (issue 21): see the tests below."""

from __future__ import annotations
