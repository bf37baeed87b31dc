"""Benchmark: the local server of `make live` beside raw ``llama_cpp.Llama`` on the same prompts (issue 23).

Both sides get the same requests as the audit (one user message, the forced ``choose`` tool, temperature 0,
64-token cap, chat format ``chatml-function-calling``), in the same order, with the same threads
(``--n_threads 1 --n_threads_batch <every core>``, ``logits_all`` off: scripts/live_server.sh), so each
keeps its own prompt cache the same way. Prompts: the first ``--plain`` no-example prompts and the first
``--long`` 80-example prompts of the smoke battery (the first long one fills the cache, later ones reuse
its prefix). Printed per call kind: seconds a call (median) and prompt tokens/s (tokens sent / seconds,
so cache hits count as fast) for the server and for the raw bindings, and server / raw as a ratio; with
the load average (1 min) before and after each side. ``--hog N`` runs N busy-loop processes meanwhile
(a loaded machine); ``--server-flags old`` serves with issue 13's flags (``--n_threads 2``, ``logits_all`` on).

    .venv/bin/python benchmarks/bench_live.py [--plain 3] [--long 3] [--hog 0] [--server-flags project] [--json OUT]

Needs the server built (scripts/live_build.sh; `make bench-live` builds it first). Not a timed test.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import config  # noqa: E402
from analysis.audit.batteries import battery_conditions, jobs_of  # noqa: E402

LIVE = Path(os.environ.get("LIVE_DIR", ROOT / ".live"))
VENV_PY = LIVE / "venv" / "bin" / "python"
GGUF = LIVE / "model" / "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 8192
TOOL = {"type": "function", "function": {"name": config.TOOL_NAME, "description": config.TOOL_DESCRIPTION,
        "parameters": {"type": "object", "properties": {"patient": {"type": "integer", "enum": [1, 2]}},
                       "required": ["patient"]}}}
TOOL_CHOICE = {"type": "function", "function": {"name": config.TOOL_NAME}}
#: scripts/live_server.sh's rule: every core for the prompt unless the 1-minute load average already exceeds them
_BATCH = 1 if os.getloadavg()[0] > (os.cpu_count() or 2) else (os.cpu_count() or 2)
FLAGS = {"project": {"n_threads": 1, "n_threads_batch": _BATCH, "logits_all": False},
         "old": {"n_threads": 2, "n_threads_batch": 2, "logits_all": True}}

# The raw side, run by the live venv's python: reads {"gguf", "flags", "requests", "scripts"} on stdin, prints one
# JSON line per request with its seconds and usage. It loads the weights as the server does (scripts/live_server.py's
# patch: repacking off where AMX is advertised); the stock bindings die with SIGILL on the first long prompt on a
# machine that advertises AMX without enabling it (Intel Xeon, 2026-12-06), so without it there is nothing to compare.
RAW_WORKER = r"""
import json, sys, time
spec = json.load(sys.stdin)
sys.path.insert(0, spec["scripts"])
from live_server import patch_server
patch_server()
from llama_cpp import Llama
f = spec["flags"]
llm = Llama(model_path=spec["gguf"], n_ctx=spec["n_ctx"], n_threads=f["n_threads"], n_threads_batch=f["n_threads_batch"],
            logits_all=f["logits_all"], chat_format="chatml-function-calling", verbose=False)
for req in spec["requests"]:
    t0 = time.perf_counter()
    out = llm.create_chat_completion(**req)
    print(json.dumps({"seconds": time.perf_counter() - t0, "prompt_tokens": out["usage"]["prompt_tokens"]}), flush=True)
"""


def requests(n_plain: int, n_long: int) -> list[tuple[str, dict]]:
    """(kind, request body) in the order the audit asks them: the no-example cell first, then the 80-example cell."""
    out = []
    for cond, n, kind in zip(battery_conditions("smoke"), (n_plain, n_long), ("no examples", "80 examples")):
        for jb in jobs_of(cond)[:n]:
            out.append((kind, {"messages": [{"role": "user", "content": jb.prompt}], "tools": [TOOL],
                               "tool_choice": TOOL_CHOICE, "temperature": 0, "max_tokens": config.MAX_TOKENS}))
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_server(reqs: list[dict], flags: dict) -> list[dict]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(os.devnull, "wb")
    proc = subprocess.Popen([str(VENV_PY), str(ROOT / "scripts" / "live_server.py"), "--model", str(GGUF),
                             "--model_alias", "smollm2-135m", "--host", "127.0.0.1", "--port", str(port),
                             "--chat_format", "chatml-function-calling", "--n_ctx", str(N_CTX),
                             "--n_threads", str(flags["n_threads"]), "--n_threads_batch", str(flags["n_threads_batch"]),
                             "--logits_all", str(flags["logits_all"]).lower()], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                urllib.request.urlopen(url + "/v1/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"bench_live: the server did not start (exit {proc.poll()})")
                time.sleep(0.5)
        out = []
        for body in reqs:
            data = json.dumps({"model": "smollm2-135m", **body}).encode()
            req = urllib.request.Request(url + "/v1/chat/completions", data=data,
                                         headers={"Content-Type": "application/json"})
            t0 = time.perf_counter()
            reply = json.loads(urllib.request.urlopen(req, timeout=900).read())
            out.append({"seconds": time.perf_counter() - t0, "prompt_tokens": reply["usage"]["prompt_tokens"]})
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def run_raw(reqs: list[dict], flags: dict) -> list[dict]:
    spec = {"gguf": str(GGUF), "n_ctx": N_CTX, "flags": flags, "requests": reqs, "scripts": str(ROOT / "scripts")}
    res = subprocess.run([str(VENV_PY), "-c", RAW_WORKER], input=json.dumps(spec), capture_output=True, text=True,
                         timeout=3600)
    if res.returncode != 0:
        raise SystemExit(f"bench_live: the raw bindings failed ({_exit_reason(res.returncode)}): "
                         f"{res.stderr.strip().splitlines()[-1:]}")
    return [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]


def _exit_reason(returncode: int) -> str:
    """``exit 1``, or the signal that killed the process by name (``SIGILL``: an instruction the CPU refused)."""
    if returncode >= 0:
        return f"exit {returncode}"
    try:
        return f"killed by {signal.Signals(-returncode).name}"
    except ValueError:
        return f"killed by signal {-returncode}"


def summarise(kinds: list[str], server: list[dict], raw: list[dict]) -> dict:
    out = {}
    for kind in dict.fromkeys(kinds):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        row = {"n": len(idx)}
        for side, res in (("server", server), ("raw", raw)):
            secs = [res[i]["seconds"] for i in idx]
            toks = [res[i]["prompt_tokens"] for i in idx]
            row[side] = {"seconds_median": statistics.median(secs), "seconds_first": secs[0],
                         "seconds_total": sum(secs), "prompt_tokens_per_s": sum(toks) / sum(secs),
                         "prompt_tokens_mean": sum(toks) / len(toks)}
        row["ratio_server_over_raw"] = row["server"]["seconds_total"] / row["raw"]["seconds_total"]
        out[kind] = row
    tot_s = sum(r["seconds"] for r in server)
    tot_r = sum(r["seconds"] for r in raw)
    out["all"] = {"server_seconds": tot_s, "raw_seconds": tot_r, "ratio_server_over_raw": tot_s / tot_r}
    return out


def _repacking_off() -> bool:
    """scripts/live_server.py's own rule, read from that file (both sides load the weights that way)."""
    spec = importlib.util.spec_from_file_location("live_server", ROOT / "scripts" / "live_server.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.repacking_off()


def _hogs(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plain", type=int, default=3, help="no-example prompts (default 3)")
    ap.add_argument("--long", type=int, default=3, help="80-example prompts (default 3)")
    ap.add_argument("--hog", type=int, default=0, help="busy-loop processes running meanwhile (default 0)")
    ap.add_argument("--server-flags", choices=sorted(FLAGS), default="project")
    ap.add_argument("--raw-flags", choices=sorted(FLAGS), default="project")
    ap.add_argument("--only", choices=("both", "server", "raw"), default="both")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args(argv)
    if not (VENV_PY.exists() and GGUF.exists()):
        print(f"bench_live: the local server is not built ({LIVE}); run scripts/live_build.sh or make bench-live",
              file=sys.stderr)
        return 2
    pairs = requests(a.plain, a.long)
    kinds, reqs = [k for k, _ in pairs], [r for _, r in pairs]
    hogs = _hogs(a.hog)
    try:
        load = {"start": os.getloadavg()[0]}
        server = run_server(reqs, FLAGS[a.server_flags]) if a.only != "raw" else None
        load["after_server"] = os.getloadavg()[0]
        raw = run_raw(reqs, FLAGS[a.raw_flags]) if a.only != "server" else None
        load["after_raw"] = os.getloadavg()[0]
    finally:
        for h in hogs:
            h.kill()
    repacking_off = _repacking_off()
    res = {"server_flags": a.server_flags, "raw_flags": a.raw_flags, "repacking_off": repacking_off,
           "hog_processes": a.hog, "cores": os.cpu_count(),
           "load_average_1min": {k: round(v, 2) for k, v in load.items()}, "calls": list(zip(kinds, server or [], raw or []))}
    print(f"bench_live: {len(reqs)} calls a side; server flags {a.server_flags} {FLAGS[a.server_flags]}; raw flags "
          f"{a.raw_flags}; weight repacking {'off' if repacking_off else 'on'} on both sides; {a.hog} busy-loop "
          f"processes; {os.cpu_count()} cores; load average (1 min) "
          + ", ".join(f"{k} {v:.2f}" for k, v in load.items()))
    if server and raw:
        res["summary"] = summarise(kinds, server, raw)
        print(f"{'calls':<12} {'n':>2}  {'server s/call':>13} {'raw s/call':>10}  {'server tok/s':>12} "
              f"{'raw tok/s':>9}  {'server/raw':>10}")
        for kind, row in res["summary"].items():
            if kind == "all":
                continue
            s, r = row["server"], row["raw"]
            print(f"{kind:<12} {row['n']:>2}  {s['seconds_median']:>13.2f} {r['seconds_median']:>10.2f}  "
                  f"{s['prompt_tokens_per_s']:>12.0f} {r['prompt_tokens_per_s']:>9.0f}  {row['ratio_server_over_raw']:>10.2f}")
        t = res["summary"]["all"]
        print(f"all calls: server {t['server_seconds']:.1f} s, raw {t['raw_seconds']:.1f} s, "
              f"server/raw {t['ratio_server_over_raw']:.2f} (first call of each kind included; medians above)")
    else:
        for kind, r in zip(kinds, server or raw):
            print(f"{kind:<12} {r['seconds']:.2f} s  {r['prompt_tokens']} prompt tokens")
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
