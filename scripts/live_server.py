"""Start llama-cpp-python's OpenAI-compatible server; turn off extra weight buffer types only where AMX is advertised.

Usage: .live/venv/bin/python scripts/live_server.py --model GGUF ... (the arguments of
``python -m llama_cpp.server``). llama.cpp repacks quantized weights into "extra" buffer types
(AMX tiles, AVX-512 layouts) where the CPU reports the instructions; in virtual machines that
advertise AMX without enabling it, the first matrix product then dies with a general protection
fault (seen on the compendium's build machines of issue 13, which advertised ``amx_tile``). On a
CPU that advertises no AMX (an AVX2-only AMD EPYC here, issue 23) the stock server answered, so
the workaround is applied only where ``/proc/cpuinfo`` lists an ``amx`` flag. ``LIVE_REPACK=off``
forces it, ``LIVE_REPACK=on`` keeps the stock behaviour.

With ``--logits_all true`` (log-probabilities), the stock text completion computes the log-softmax of
every evaluated position (``Llama.logits_to_logprobs(self._scores)[token_offset:]``) to return the rows
of the generated tokens only: for Gemma 3 (262,144 tokens in its vocabulary) and a 6,000-token prompt
that is several temporary arrays of 6 GB. :class:`RowsOnDemand` computes the same function on the rows
that are asked for (the same numbers: the log-softmax is computed row by row). Everything else is the
stock server.
"""
from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

import numpy as np


def amx_advertised(cpuinfo: str | None = None) -> bool:
    """True when a ``flags`` line of ``/proc/cpuinfo`` names an AMX instruction set (``amx_tile``, ``amx_int8``...)."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.exists() else ""
    return any(flag.startswith("amx") for line in cpuinfo.splitlines() if line.startswith("flags")
               for flag in line.split(":", 1)[-1].split())


def repacking_off() -> bool:
    choice = os.environ.get("LIVE_REPACK", "auto")
    return choice == "off" or (choice == "auto" and amx_advertised())


class RowsOnDemand:
    """The log-softmax of a 2-D logits array, computed only for the rows a slice asks for."""

    def __init__(self, logits, rowwise):
        self.logits, self.rowwise = logits, rowwise

    def __getitem__(self, key):
        return self.rowwise(np.asarray(self.logits)[key])

    def __len__(self):
        return len(self.logits)


def on_demand(logits_to_logprobs):
    """``logits_to_logprobs`` that defers a 2-D call (every position) to the rows used; 1-D calls unchanged."""
    def wrapped(logits, axis: int = -1):
        if axis == -1 and getattr(logits, "ndim", 1) == 2:
            return RowsOnDemand(logits, logits_to_logprobs)
        return logits_to_logprobs(logits, axis)
    return staticmethod(wrapped)


def patch_server() -> None:
    """Repacking off where AMX is advertised; log-probabilities of the rows returned only."""
    import llama_cpp.llama as _L  # heavy: only in the live server's own venv
    import llama_cpp.llama_cpp as _C

    if repacking_off():
        _default = _C.llama_model_default_params

        def _params_without_extra_bufts():
            params = _default()
            params.use_extra_bufts = False
            return params

        _C.llama_model_default_params = _params_without_extra_bufts
        print("live_server: extra weight buffer types (AMX/AVX-512 repacking) turned off", file=sys.stderr)
    _L.Llama.logits_to_logprobs = on_demand(_L.Llama.__dict__["logits_to_logprobs"].__func__)


if __name__ == "__main__":
    patch_server()
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
