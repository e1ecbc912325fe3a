#!/usr/bin/env bash
# Creates .venv with Python 3.12 and installs rlcheck with the reference stack.
# Idempotent: a stamp of the requirement files skips the work when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv
STAMP="$VENV/.rlcheck-stamp"
LOG="$VENV/setup.log"

is_py312() { "$1" -c 'import sys; raise SystemExit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; }

find_python() {
  local c
  for c in "${RLCHECK_PYTHON:-}" python3.12 python3; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && is_py312 "$(command -v "$c")" && { command -v "$c"; return; }
  done
  if command -v pyenv >/dev/null 2>&1; then
    for c in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.12(\.|$)' | sort -rV); do
      is_py312 "$(pyenv root)/versions/$c/bin/python3.12" && { echo "$(pyenv root)/versions/$c/bin/python3.12"; return; }
    done
  fi
  for c in "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do
    [ -x "$c" ] && is_py312 "$c" && { echo "$c"; return; }
  done
  echo "rlcheck setup: Python 3.12 not found (tried \$RLCHECK_PYTHON, python3.12, python3, pyenv, ~/.pyenv)." >&2
  echo "Install Python 3.12 or point RLCHECK_PYTHON at it." >&2
  exit 2
}

want=$(cat requirements/*.in requirements/lock.txt pyproject.toml scripts/setup.sh scripts/setup-sidecars.sh | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  exit 0
fi

PY=$(find_python)
echo "rlcheck setup: $PY ($("$PY" --version 2>&1)) -> $VENV (log: $LOG)"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
: >"$LOG"
pip_install() {
  if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -q -c requirements/lock.txt "$@" >>"$LOG" 2>&1; then
    grep -v 'is ignored: it is neither a file nor a directory' "$LOG" | tail -n 30 >&2
    echo "rlcheck setup: pip install $* failed; full log in $LOG" >&2
    exit 1
  fi
}
start=$SECONDS
pip_install -r requirements/stack.in
pip_install --no-deps -r requirements/stack-nodeps.in
pip_install --no-deps -e .
bash scripts/setup-sidecars.sh "$VENV" >>"$LOG" 2>&1 || { tail -n 20 "$LOG" >&2; echo "rlcheck setup: side directories failed; log in $LOG" >&2; exit 1; }
echo "$want" >"$STAMP"
echo "rlcheck setup: done in $((SECONDS - start)) s"
