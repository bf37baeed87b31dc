#!/usr/bin/env bash
# `make live`: the smoke audit of a real local model behind a real OpenAI-compatible server (issues 13, 23).
#
# 1. builds llama-cpp-python[server] once into .live/venv, with every core, and extracts the GGUF (scripts/live_build.sh);
# 2. starts the server on 127.0.0.1 on a free port (scripts/live_server.sh: --chat_format chatml-function-calling,
#    one generation thread, every core for the prompt, no logits_all), waits for /v1/models;
# 3. runs the smoke battery (its own 24 pairs: 288 calls) into audit_out/smollm2, then writes what the server did
#    (seconds a call, prompt tokens sent and evaluated: scripts/live_meta.py) into the card as `live_server`;
# 4. copies the card to audit_out/example/ with a README that states the command and the measured wall time;
# 5. stops the server whatever happens (trap on EXIT, INT, TERM). A rerun asks only what the ledger lacks.
# Environment: PY (the compendium's python, default .venv/bin/python), LIVE_PAIRS (default 24, the smoke battery's
# own), LIVE_MODEL (smollm2 | gemma3-270m, a base model for LIVE_FORMAT=completion; default smollm2), LIVE_FORMAT (tool | json | text | logprobs | completion; default tool; logprobs and completion serve with
# --logits_all true, which llama-cpp-python needs to return log-probabilities; completion scores the tokens 1 and 2
# after a completion prompt on POST /v1/completions, as for a base model, and is tested against fakes only), LIVE_OUT (default audit_out/smollm2, or
# audit_out/smollm2-FORMAT), LIVE_EXAMPLE (default audit_out/example, or audit_out/example/FORMAT), LIVE_N_CTX
# (default 8192), LIVE_TIMEOUT (seconds per request, default 600: the first 80-example call evaluates ~6,000 prompt
# tokens, 51 s on 2 quiet cores and minutes on loaded ones), LIVE_BATTERY (default smoke).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="${PY:-.venv/bin/python}"
FORMAT="${LIVE_FORMAT:-tool}"
BATTERY="${LIVE_BATTERY:-smoke}"
case "$FORMAT" in
  tool|json|text) ;;
  logprobs|completion) LIVE_LOGITS_ALL="${LIVE_LOGITS_ALL:-true}" ;;  # read by scripts/live_server.sh
  *) echo "live: LIVE_FORMAT must be tool, json, text, logprobs or completion, not '$FORMAT'" >&2; exit 2 ;;
esac
if [ "$FORMAT" = tool ]; then SUFFIX=""; else SUFFIX="-$FORMAT"; fi
# LIVE_MODEL: smollm2 (default) or gemma3-270m (a base model: LIVE_FORMAT=completion; scripts/live_build.sh)
export LIVE_MODEL="${LIVE_MODEL:-smollm2}"
case "$LIVE_MODEL" in
  smollm2) MODEL_ID="smollm2-135m"
           OUT="${LIVE_OUT:-audit_out/smollm2$SUFFIX}"
           EXAMPLE="${LIVE_EXAMPLE:-audit_out/example${SUFFIX:+/$FORMAT}}" ;;
  gemma3-270m) MODEL_ID="gemma3-270m"
           OUT="${LIVE_OUT:-audit_out/gemma3-270m$SUFFIX}"
           EXAMPLE="${LIVE_EXAMPLE:-audit_out/example/gemma3-270m$SUFFIX}" ;;
  *) echo "live: LIVE_MODEL must be smollm2 or gemma3-270m, not '$LIVE_MODEL'" >&2; exit 2 ;;
esac
export LIVE_MODEL_ALIAS="$MODEL_ID"  # read by scripts/live_server.sh

GGUF="$(scripts/live_build.sh | tail -n 1)"
source scripts/live_server.sh
live_server_start "$GGUF" "${LIVE_N_CTX:-8192}"   # sets LIVE_URL, LIVE_PID, LIVE_LOG, LIVE_SERVER_ARGS; installs the trap

# LIVE_PAIRS may list several sizes ("6 12 24"): the same server answers each in turn and the card is written after
# each (a ledger answer is never asked twice), so an interrupted run still leaves the card of the last size reached.
since="$(date -u +%Y-%m-%dT%H:%M:%S+00:00)"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
for PAIRS in ${LIVE_PAIRS:-24}; do
  ARGS=(--provider openai --base-url "$LIVE_URL/v1" --model "$MODEL_ID" --battery "$BATTERY")
  [ "$BATTERY" = smoke ] && ARGS+=(--pairs "$PAIRS")
  ARGS+=(--concurrency 1 --timeout "${LIVE_TIMEOUT:-600}" --price-in 0 --price-out 0 --api-key-env LIVE_API_KEY)
  [ "$FORMAT" = tool ] || ARGS+=(--answer-format "$FORMAT")
  ARGS+=(--out "$OUT")
  echo "live: $PY -m analysis audit ${ARGS[*]}" >&2
  # the local server needs no key; a placeholder, never a real key, goes in LIVE_API_KEY
  LIVE_API_KEY="local-server-needs-no-key" "$PY" -m analysis audit "${ARGS[@]}"
  elapsed=$(( $(date +%s) - start ))
  load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "live: audit with $PAIRS pairs finished, ${elapsed} s since the start" >&2
  [ "$BATTERY" = smoke ] || continue

  mkdir -p "$EXAMPLE"
  "$PY" scripts/live_meta.py --ledger "$OUT/ledger.sqlite" --server-log "$LIVE_LOG" --since "$since" \
      --out "$OUT/live_server.json" > /dev/null
  "$PY" - "$OUT" "$EXAMPLE" "$elapsed" "$load_before" "$load_after" "${LIVE_SERVER_ARGS[*]}" <<'PY'
import json, os, pathlib, sys
out, example, elapsed, before, after, server_args = sys.argv[1:]
card = json.loads((pathlib.Path(out) / "report_card.json").read_text())
meta = json.loads((pathlib.Path(out) / "live_server.json").read_text())
meta.update(audit_wall_seconds=int(elapsed), load_average_before=before, load_average_after=after,
            cores=os.cpu_count(), server_arguments=server_args.replace(str(pathlib.Path.cwd()) + "/", "").replace(
                os.environ.get("LIVE_DIR", "/nonexistent").rstrip("/") + "/", ".live/"))  # no machine path
card["live_server"] = meta  # written by scripts/live.sh from the ledger and the server's log (scripts/live_meta.py)
(pathlib.Path(example) / "report_card.json").write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n")
PY
  cp "$OUT/report_card.html" "$EXAMPLE/"
  "$PY" scripts/live_readme.py --card "$EXAMPLE/report_card.json" --model "$LIVE_MODEL" --format "$FORMAT" --out-dir "$OUT" \
      --pairs "$PAIRS" --timeout "${LIVE_TIMEOUT:-600}" --steps "${LIVE_PAIRS:-24}" > "$EXAMPLE/README.md"
  echo "live: card of $PAIRS pairs copied to $EXAMPLE/" >&2
done
