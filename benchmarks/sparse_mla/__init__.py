"""Sparse-MLA kernel benchmark: `python -m benchmarks.sparse_mla --out RESULT.json` (see __main__)."""
