# Sourced by scripts/live.sh and scripts/live_test.sh: start and stop the local llama-cpp-python server.
# live_server_start GGUF N_CTX -> LIVE_URL (http://127.0.0.1:PORT), LIVE_PID, LIVE_LOG, LIVE_SERVER_ARGS; the
# server stops on exit. Environment: LIVE_THREADS (generation, default 1), LIVE_THREADS_BATCH (prompt, default
# every core), LIVE_LOGITS_ALL (default false; scripts/live.sh sets true for LIVE_FORMAT=logprobs or completion),
# LIVE_CHAT_FORMAT, LIVE_MODEL_ALIAS.
LIVE_VENV="${LIVE_DIR:-$ROOT/.live}/venv"

live_server_stop() {
  if [ -n "${LIVE_PID:-}" ] && kill -0 "$LIVE_PID" 2>/dev/null; then
    kill "$LIVE_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$LIVE_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$LIVE_PID" 2>/dev/null || true
    echo "live: server $LIVE_PID stopped" >&2
  fi
  LIVE_PID=""
}

live_server_start() {
  local gguf="$1" n_ctx="${2:-8192}" port log
  port="$("$LIVE_VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  log="${LIVE_SERVER_LOG:-${TMPDIR:-/tmp}/live-server-$port.log}"
  trap live_server_stop EXIT
  trap 'live_server_stop; exit 130' INT
  trap 'live_server_stop; exit 143' TERM
  # One thread generates, no logits kept for every prompt token (LIVE_LOGITS_ALL=true where a client needs them:
  # --answer-format logprobs on /v1/chat/completions, --answer-format completion on /v1/completions). The prompt is evaluated with every core on a quiet machine and with one thread when
  # the 1-minute load average already exceeds the cores: under a second CPU-bound process an 8-token answer took
  # 3.3 s with --n_threads 1 --n_threads_batch 2 and 43 s with --n_threads 2 and logits_all on (issue 23); at a load
  # average of 15 on 2 cores one thread evaluated 10 prompt tokens/s and two threads 4 (their barrier waits on a
  # descheduled thread). `make bench-live` measures it.
  local cores load
  cores="$(nproc)"
  load="$(cut -d' ' -f1 /proc/loadavg)"
  LIVE_BATCH_DEFAULT="$cores"
  awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > c) }' && LIVE_BATCH_DEFAULT=1
  LIVE_SERVER_ARGS=(--model "$gguf" --model_alias "${LIVE_MODEL_ALIAS:-smollm2-135m}" --host 127.0.0.1 --port "$port"
      --chat_format "${LIVE_CHAT_FORMAT:-chatml-function-calling}" --n_ctx "$n_ctx"
      --n_threads "${LIVE_THREADS:-1}" --n_threads_batch "${LIVE_THREADS_BATCH:-$LIVE_BATCH_DEFAULT}"
      --logits_all "${LIVE_LOGITS_ALL:-false}")
  "$LIVE_VENV/bin/python" "$ROOT/scripts/live_server.py" "${LIVE_SERVER_ARGS[@]}" > "$log" 2>&1 &
  LIVE_PID=$!
  LIVE_URL="http://127.0.0.1:$port"
  LIVE_LOG="$log"
  for _ in $(seq 1 "${LIVE_WAIT:-240}"); do
    if "$LIVE_VENV/bin/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" \
        "$LIVE_URL/v1/models" 2>/dev/null; then
      echo "live: server $LIVE_PID ready at $LIVE_URL (log $log)" >&2
      return 0
    fi
    kill -0 "$LIVE_PID" 2>/dev/null || { echo "live: the server exited; see $log" >&2; tail -5 "$log" >&2; return 1; }
    sleep 0.5
  done
  echo "live: the server did not answer /v1/models in time; see $log" >&2
  return 1
}
