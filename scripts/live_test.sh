#!/usr/bin/env bash
# `make test-live`: build the local server once (scripts/live_build.sh), then run the tests marked `live`.
# A failed build is not a test failure: the live tests skip with a one-line reason (LIVE_SKIP_REASON).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="${PY:-.venv/bin/python}"
log="${TMPDIR:-/tmp}/live-build-$$.log"
if ! scripts/live_build.sh > "$log" 2>&1; then
  export LIVE_SKIP_REASON="the local server could not be built ($(tail -n 1 "$log" | cut -c1-160); log $log)"
  echo "live: $LIVE_SKIP_REASON" >&2
fi
exec "$PY" -m pytest -q -p no:cacheprovider -m live -rs tests/live "$@"
