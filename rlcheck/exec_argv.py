"""`python3 -m rlcheck.exec_argv` is inside rendered RayJob manifests; it lives on in rlcheck.cluster.exec_argv."""

from __future__ import annotations

if __name__ == "__main__":
    from rlcheck.cluster.exec_argv import main

    raise SystemExit(main())
