#!/usr/bin/env bash
# Side directories for reproducers that need another version of a package than the
# reference stack (numpy 2, an older uvicorn, megatron-core without megatron.training, SGLang 0.5.16).
# Each is a --target directory put first on PYTHONPATH by the reproducer that needs it;
# the main environment is never changed.
set -euo pipefail
VENV=${1:-.venv}
SIDE=.sidecar
mkdir -p "$SIDE"
side() {  # side NAME PACKAGE==VERSION...
  local name=$1; shift
  [ -f "$SIDE/$name/.done" ] && return 0
  rm -rf "$SIDE/$name"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps --target "$SIDE/$name" "$@"
  touch "$SIDE/$name/.done"
}
side uvicorn-0.44 uvicorn==0.44.0
side numpy-2 numpy==2.5.5
side megatron-core-0.16 megatron-core==0.16.1
side megatron-core-0.15 megatron-core==0.15.3
# SGLang 0.5.16 (the release Miles' image builds on): its ServerArgs parser, with the three packages it imports that
# the reference stack lacks; tests/test_framework_sglang_release.py rebuilds components/sglang-0.5.16.json from it
side sglang-0.5.16 sglang==0.5.16 msgspec==0.23.0 xgrammar==0.2.9 apache-tvm-ffi==0.1.15.post2
