"""The audit's battery as an inspect_ai task (issue 24): ``inspect eval analysis/proxy_audit -T battery=core``.

Needs the optional extra ``[inspect]`` (``inspect_ai``). See :mod:`analysis.proxy_audit.task`; the logs come
back into the ledger with ``python -m analysis collect --import-inspect LOG`` (:mod:`analysis.inspect_bridge`).
"""
from __future__ import annotations

from .task import PROTOCOL_CONFIG, battery_samples, choose_answer, choose_forced, choose_tool, job_sample, \
    patient_of_output, proxy_audit

__all__ = ["PROTOCOL_CONFIG", "battery_samples", "choose_answer", "choose_forced", "choose_tool", "job_sample",
           "patient_of_output", "proxy_audit"]
