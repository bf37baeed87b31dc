"""Start llama-cpp-python's OpenAI-compatible server without extra weight buffer types.

Usage: .live/venv/bin/python scripts/live_server.py --model GGUF ... (the arguments of
``python -m llama_cpp.server``). llama.cpp repacks quantized weights into "extra" buffer types
(AMX tiles, AVX-512 layouts) where the CPU reports the instructions; in virtual machines that
advertise AMX without enabling it, the first matrix product then dies with a general protection
fault (seen on the compendium's build machines). This launcher turns ``use_extra_bufts`` off in
the model parameters, which keeps the plain CPU kernels; everything else is the stock server.
"""
from __future__ import annotations

import runpy
import sys

import llama_cpp.llama_cpp as _C

_default = _C.llama_model_default_params


def _params_without_extra_bufts():
    params = _default()
    params.use_extra_bufts = False
    return params


_C.llama_model_default_params = _params_without_extra_bufts

if __name__ == "__main__":
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
