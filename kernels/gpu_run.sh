#!/usr/bin/env bash
# One full GPU pass for one TileLang version, writing everything under $OUT:
#   tests (every variant compiled in parallel first), the pass-config bisect, the benchmark.
# usage: bash kernels/gpu_run.sh TAG [SITE_ARCHIVE] [BENCH_ARGS...]
#   SITE_ARCHIVE: a .tar.xz of a site-packages dir holding tilelang, apache-tvm-ffi,
#   torch-c-dlpack-ext and z3-solver (unpacked to /tmp/site_TAG and put on PYTHONPATH);
#   "-" uses the installed TileLang. BENCH_ARGS "skip" skips the benchmark.
# Each stage has its own timeout so one hang cannot take the others' results with it.
set -uo pipefail
command="bash kernels/gpu_run.sh$(printf ' %q' "$@")"
tag=$1
archive=${2:--}
shift $(( $# >= 2 ? 2 : $# ))
out=${OUT:-/tmp/rlcheck-gpu-out}
mkdir -p "$out"
if [[ "$archive" != "-" ]]; then
  mkdir -p "/tmp/site_$tag" && tar -xJf "$archive" -C "/tmp/site_$tag" || { echo "unpack failed"; exit 2; }
  export PYTHONPATH="/tmp/site_$tag:$PWD"
else
  export PYTHONPATH="$PWD"
fi
export PYTHONUNBUFFERED=1
python3 -c 'import tilelang, torch; print("tilelang", tilelang.__version__, "torch", torch.__version__, torch.cuda.get_device_name())' 2>&1 | tail -3

echo "== tests"
RLCHECK_KERNEL_RESULTS="$out/kernels_$tag.json" timeout 330 python3 -m pytest -p no:cacheprovider \
  --noconftest -c /dev/null --rootdir . kernels/ -q -rA > "$out/pytest_$tag.log" 2>&1
grep -E "^(PASSED|FAILED|XFAIL|XPASS|ERROR|SKIPPED)|passed|failed" "$out/pytest_$tag.log" | cut -c1-220 | tail -40

echo "== bisect"
timeout 120 python3 -m kernels.bisect --json "$out/bisect_$tag.json" > "$out/bisect_$tag.log" 2>&1
grep -v INFO "$out/bisect_$tag.log" | cut -c1-240 | tail -16

if [[ "${1:-}" != "skip" ]]; then
  echo "== benchmark"
  timeout 300 python3 -m benchmarks.sparse_mla --out "$out/sparse_mla_$tag.json" "$@" > "$out/bench_$tag.log" 2>&1
grep -v -E "INFO|it/s" "$out/bench_$tag.log" | cut -c1-240 | tail -40
fi

echo "== result file"
python3 -m benchmarks.kernels_gpu.collect "$out" "$tag" --command "$command"
