"""What the local server did during one `make live` run: seconds a call, prompt tokens sent and evaluated.

Usage: python scripts/live_meta.py --ledger LEDGER --server-log LOG --since ISO_UTC [--out JSON]

* **seconds a call** from the ledger's ``attempts`` (``latency_s``) made since ``--since``: per cell the
  first call, the median and the maximum (the first 80-example call fills the server's prompt cache);
* **prompt tokens sent** are the server's ``usage.prompt_tokens`` summed over those attempts;
* **prompt tokens evaluated** are those minus the tokens llama-cpp-python reused from its prompt cache:
  it logs ``Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`` for every completion
  that shares a prefix with the previous one (verbose server, the default). Its ``usage`` counts every
  prompt token and it returns no ``timings``, so the log is the only source of the reuse.

Prints the JSON (and writes it to ``--out``). Standard library and pandas only.
"""
from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import sys
from pathlib import Path

PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")


def server_reuse(log_text: str) -> dict:
    """Completions that reused a cached prefix, and the prompt tokens reused and evaluated in them."""
    hits = [(int(a), int(b)) for a, b in PREFIX_HIT.findall(log_text)]
    return {"completions_with_prefix_hit": len(hits), "prompt_tokens_reused": sum(a for a, _ in hits),
            "prompt_tokens_evaluated_after_hit": sum(b for _, b in hits)}


def attempts_since(ledger: Path, since: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    try:
        return con.execute("SELECT cell, latency_s, input_tokens, output_tokens, outcome FROM attempts "
                           "WHERE created_utc >= ? AND latency_s IS NOT NULL ORDER BY id", (since,)).fetchall()
    finally:
        con.close()


def summarise(rows: list[tuple], reuse: dict) -> dict:
    cells: dict[str, list[float]] = {}
    for cell, lat, *_ in rows:
        cells.setdefault(cell, []).append(float(lat))
    sent = sum(int(r[2] or 0) for r in rows)
    out = {"n_calls": len(rows),
           "seconds_a_call": {c: {"n": len(v), "first": round(v[0], 2), "median": round(statistics.median(v), 2),
                                  "max": round(max(v), 2), "total": round(sum(v), 1)} for c, v in cells.items()},
           "prompt_tokens_sent": sent, "output_tokens": sum(int(r[3] or 0) for r in rows), **reuse}
    out["prompt_tokens_evaluated"] = sent - reuse["prompt_tokens_reused"] if rows else None
    out["evaluated_share"] = round(out["prompt_tokens_evaluated"] / sent, 4) if sent else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ledger", type=Path, required=True)
    ap.add_argument("--server-log", type=Path, required=True)
    ap.add_argument("--since", required=True, help="ISO UTC time the run started (attempts from then on)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    if not a.ledger.is_file():
        print(f"live_meta: no ledger at {a.ledger}", file=sys.stderr)
        return 2
    log = a.server_log.read_text(errors="replace") if a.server_log.is_file() else ""
    out = summarise(attempts_since(a.ledger, a.since), server_reuse(log))
    text = json.dumps(out, indent=1)
    if a.out:
        a.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
