"""benchmarks/bench_live.py: the raw bindings load the weights as the server does (issue 23, found 2026-12-06).

The raw side ran stock ``llama_cpp.Llama``; on a machine that advertises AMX without enabling it, its first long
prompt died with SIGILL (exit -4, nothing on stderr) and `make bench-live` printed "the raw bindings failed: []".
The fake ``llama_cpp`` below does what that machine did: a model loaded with the extra (repacked) buffer types
dies with SIGILL on its first call.
"""
from __future__ import annotations

import importlib.util
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_live", ROOT / "benchmarks" / "bench_live.py")
bench_live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_live)

FAKE = {
    "__init__.py": "from .llama import Llama\n",
    "llama_cpp.py": (
        "class _Params:\n"
        "    use_extra_bufts = True\n"
        "def llama_model_default_params():\n"
        "    return _Params()\n"),
    "llama.py": (
        "import os, signal\n"
        "import llama_cpp.llama_cpp as _C\n"
        "class Llama:\n"
        "    @staticmethod\n"
        "    def logits_to_logprobs(logits, axis=-1):\n"
        "        return logits\n"
        "    def __init__(self, model_path, **kwargs):\n"
        "        self.params = _C.llama_model_default_params()\n"
        "    def create_chat_completion(self, **request):\n"
        "        if self.params.use_extra_bufts:\n"
        "            os.kill(os.getpid(), signal.SIGILL)\n"
        "        return {'usage': {'prompt_tokens': len(request['messages'][0]['content'])}}\n"),
}


@pytest.fixture
def fake_bindings(tmp_path, monkeypatch):
    pkg = tmp_path / "llama_cpp"
    pkg.mkdir()
    for name, text in FAKE.items():
        (pkg / name).write_text(text)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(bench_live, "VENV_PY", Path(sys.executable))
    return [{"messages": [{"role": "user", "content": "abc"}]}, {"messages": [{"role": "user", "content": "abcde"}]}]


def test_raw_bindings_load_the_weights_as_the_server_does(fake_bindings, monkeypatch):
    monkeypatch.setenv("LIVE_REPACK", "off")  # what an AMX flag in /proc/cpuinfo gives, whatever this CPU advertises
    out = bench_live.run_raw(fake_bindings, bench_live.FLAGS["project"])
    assert [r["prompt_tokens"] for r in out] == [3, 5]
    assert all(r["seconds"] >= 0 for r in out)


def test_a_raw_side_killed_by_a_signal_says_which(fake_bindings, monkeypatch):
    monkeypatch.setenv("LIVE_REPACK", "on")  # the stock behaviour: the fake dies as the AMX machine did
    with pytest.raises(SystemExit, match="killed by SIGILL"):
        bench_live.run_raw(fake_bindings, bench_live.FLAGS["project"])


def test_exit_reasons():
    assert bench_live._exit_reason(1) == "exit 1"
    assert bench_live._exit_reason(-signal.SIGILL) == "killed by SIGILL"
    assert bench_live._exit_reason(-200) == "killed by signal 200"
