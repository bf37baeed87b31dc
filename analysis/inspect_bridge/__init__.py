"""The audit and inspect_ai (issue 24): the request inspect sends against the protocol's
(:mod:`.requests`), inspect logs into the ledger (:mod:`.logs`) and the ``collect --import-inspect`` /
``audit --from-inspect`` commands (:mod:`.commands`). The task itself is :mod:`analysis.proxy_audit`.

Only :mod:`.logs` needs ``inspect_ai`` (the optional extra ``[inspect]``), imported when a log is read.
"""
from __future__ import annotations

from .requests import (SAMPLE_METADATA, TASK_NAME, WIRE_ONLY, deviations, fingerprint, protocol_body,
                       request_template, sample_id, wire_body)

__all__ = ["SAMPLE_METADATA", "TASK_NAME", "WIRE_ONLY", "deviations", "fingerprint", "protocol_body",
           "request_template", "sample_id", "wire_body"]
