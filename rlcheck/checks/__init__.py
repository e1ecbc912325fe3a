"""The preflight checks as a pytest-collectable package: `rlcheck preflight` (or `pytest --pyargs rlcheck.checks`)
runs them from an installed wheel with no checkout; the repository's checks/ imports the same test functions."""
