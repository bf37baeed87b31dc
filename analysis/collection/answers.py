"""Answers: the patient a reply names, from a tool call's arguments, JSON content or text (spec §6.2)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .. import config

#: ``--answer-format``: ``tool`` is the protocol (forced ``choose`` tool); ``json`` asks for a JSON object in
#: the content; ``text`` reads the first standalone 1 or 2 of the text (the spec's fallback)
ANSWER_FORMATS = ("tool", "json", "text")
TOOL_NAME = config.TOOL_NAME  # "choose"
#: what an invalid answer is: from the model (follows ``--reask``) or from the transport/envelope (asked again)
MODEL_INVALID, TRANSPORT_INVALID = "invalid", "invalid_transport"

_STANDALONE_12 = re.compile(r"(?<![\w.])([12])(?!\w|\.\d)")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")


@dataclass
class Reply:
    """One answered request: the parsed patient (None = invalid) and its accounting."""

    patient: int | None
    served_model: str = ""
    response_id: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    raw: str = ""
    finish: str = ""


def patient_from_args(args: object) -> int | None:
    """``patient`` from a tool call's arguments (a dict or its JSON), if it is 1 or 2.

    >>> patient_from_args({"patient": 2}), patient_from_args('{"patient": 1}'), patient_from_args({"patient": 3})
    (2, 1, None)
    >>> patient_from_args('{"patient": 1'), patient_from_args({"patient": "first"}), patient_from_args({"patient": True})
    (None, None, None)
    """
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(args, dict):
        return None
    v = args.get("patient")
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)) and v in (1, 2):
        return int(v)
    if isinstance(v, str) and v.strip() in ("1", "2"):
        return int(v.strip())
    return None


def patient_from_text(text: str | None) -> int | None:
    """The first standalone ``1`` or ``2`` in a text answer (spec §6.2 fallback).

    >>> patient_from_text("Patient 2."), patient_from_text("I cannot decide."), patient_from_text("12 or 1.5")
    (2, None, None)
    """
    m = _STANDALONE_12.search(text or "")
    return int(m.group(1)) if m else None


def patient_from_json_content(text: str | None) -> int | None:
    """``patient`` of the first JSON object in a content string (``--answer-format json``).

    >>> patient_from_json_content('```json\\n{"patient": 2}\\n```'), patient_from_json_content("Patient 1")
    (2, None)
    """
    s = (text or "").strip()
    p = patient_from_args(s)
    if p is not None:
        return p
    for m in _JSON_OBJECT.finditer(s):
        p = patient_from_args(m.group(0))
        if p is not None:
            return p
    return None


def patient_from_content(text: str | None, answer_format: str) -> int | None:
    """The patient of a content string under an answer format (``tool`` falls back to the text rule)."""
    if answer_format == "json":
        return patient_from_json_content(text)
    return patient_from_text(text)


def patient_from_tool_calls(calls: list[tuple[str, object]]) -> tuple[int | None, str]:
    """``(patient, raw arguments)`` from ``(tool name, arguments)`` pairs: only a call of ``choose`` counts.

    >>> patient_from_tool_calls([("other", {"patient": 1})]), patient_from_tool_calls([("choose", '{"patient": 2}')])
    ((None, 'other: {"patient": 1}'), (2, '{"patient": 2}'))
    """
    raw = ""
    for name, args in calls:
        text = args if isinstance(args, str) else json.dumps(args, default=str)
        if name != TOOL_NAME:
            raw = raw or f"{name}: {text}"
            continue
        p = patient_from_args(args)
        if p is not None:
            return p, text
        raw = raw or text
    return None, raw
