#!/usr/bin/env bash
# The site archive kernels/gpu_run.sh unpacks on a GPU machine without a package index: one TileLang with the
# versions it runs with, installed here into a folder and packed as .whl/tilelang-VERSION-site.tar.xz
# (about 40 MB: under the 64 MiB a device call carries).
# usage: bash kernels/site_archive.sh TILELANG_VERSION   (apache-tvm-ffi: 0.1.9 for TileLang 0.1.9, whose
#        compiled extension needs exactly it; 0.1.11 for 0.1.10-0.1.11; 0.1.12 from 0.1.12 on)
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1
case "$version" in
  0.1.9) ffi=0.1.9 ;;
  0.1.10|0.1.11) ffi=0.1.11 ;;
  *) ffi=0.1.12 ;;
esac
PY=${PY:-.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$work/wheels" "tilelang==$version" "apache-tvm-ffi==$ffi" \
  "torch-c-dlpack-ext==0.1.5" "z3-solver==4.15.4.0"
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$work/site" "$work"/wheels/*.whl
mkdir -p .whl
tar -C "$work/site" -cf - . | xz -T0 -6 > ".whl/tilelang-$version-site.tar.xz"
ls -l ".whl/tilelang-$version-site.tar.xz"
