"""Start llama-cpp-python's OpenAI-compatible server; turn off extra weight buffer types only where AMX is advertised.

Usage: .live/venv/bin/python scripts/live_server.py --model GGUF ... (the arguments of
``python -m llama_cpp.server``). llama.cpp repacks quantized weights into "extra" buffer types
(AMX tiles, AVX-512 layouts) where the CPU reports the instructions; in virtual machines that
advertise AMX without enabling it, the first matrix product then dies with a general protection
fault (seen on the compendium's build machines of issue 13, which advertised ``amx_tile``). On a
CPU that advertises no AMX (an AVX2-only AMD EPYC here, issue 23) the stock server answered, so
the workaround is applied only where ``/proc/cpuinfo`` lists an ``amx`` flag. ``LIVE_REPACK=off``
forces it, ``LIVE_REPACK=on`` keeps the stock behaviour. Everything else is the stock server.
"""
from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

import llama_cpp.llama_cpp as _C


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


if repacking_off():
    _default = _C.llama_model_default_params

    def _params_without_extra_bufts():
        params = _default()
        params.use_extra_bufts = False
        return params

    _C.llama_model_default_params = _params_without_extra_bufts
    print("live_server: extra weight buffer types (AMX/AVX-512 repacking) turned off", file=sys.stderr)

if __name__ == "__main__":
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
