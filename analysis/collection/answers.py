"""Answers: the patient a reply names, from a tool call's arguments, JSON content or text (spec §6.2)."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from .. import config

#: ``--answer-format``: ``tool`` is the protocol (forced ``choose`` tool); ``json`` asks for a JSON object in
#: the content; ``text`` reads the first standalone 1 or 2 of the text (the spec's fallback); ``logprobs`` asks for
#: the single token 1 or 2 with its log-probabilities (OpenAI-compatible servers; a labelled deviation from the
#: protocol: the choice probability comes from one call); ``completion`` scores the tokens 1 and 2 after a completion
#: prompt (``POST /v1/completions``), the way lm-evaluation-harness scores multiple choice, for base models without a
#: chat template (a deviation, issue 23)
ANSWER_FORMATS = ("tool", "json", "text", "logprobs", "completion")
#: the formats whose answers carry P(patient 1) from the first token's log-probabilities
PROBABILITY_FORMATS = ("logprobs", "completion")
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
    #: ``--answer-format logprobs``/``completion``: P(patient 1) normalised over the tokens 1 and 2, and the mass outside them
    p_first: float | None = None
    p_outside: float | None = None


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


def answer_token_probabilities(top_logprobs: object) -> tuple[float | None, float | None]:
    """``(P(patient 1), mass outside)`` from the top log-probabilities of the answer token.

    ``top_logprobs`` is the OpenAI chat-completions list ``[{"token": "1", "logprob": -0.1}, ...]``. Tokens
    that read 1 or 2 once stripped of spaces are summed per answer (``"1"`` and ``" 1"`` alike);
    P(patient 1) is normalised over the two answers; the mass outside is 1 minus their summed probability
    (what the server did not list counts as outside). ``(None, None)`` when neither answer token is listed.

    >>> p, out = answer_token_probabilities([{"token": "1", "logprob": math.log(0.6)},
    ...                                      {"token": "2", "logprob": math.log(0.3)}])
    >>> round(p, 6), round(out, 6)
    (0.666667, 0.1)
    """
    mass = {1: 0.0, 2: 0.0}
    seen = False
    for entry in top_logprobs if isinstance(top_logprobs, list) else []:
        if not isinstance(entry, dict):
            continue
        token, lp = str(entry.get("token", "")).strip(), entry.get("logprob")
        if token in ("1", "2") and isinstance(lp, (int, float)) and not isinstance(lp, bool) and math.isfinite(lp):
            mass[int(token)] += math.exp(lp)
            seen = True
    total = mass[1] + mass[2]
    if not seen or total <= 0:
        return None, None
    return mass[1] / total, max(0.0, 1.0 - total)
