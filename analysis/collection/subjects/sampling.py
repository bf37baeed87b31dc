"""Which providers and models take a temperature: the one table (issue 20).

The paper's protocol asks for temperature 0 (§4.8). Some services no longer take it: the Anthropic
Messages API, from API version ``2026-10-21`` (the version the pinned ``anthropic`` SDK 2.14 sends,
``anthropic/_constants.py``), rejects ``temperature``, ``top_p`` and ``top_k`` on every model, and
``messages.create`` of that SDK has no such argument. Where the temperature cannot be fixed, no
sampling parameter is sent, each answer is one draw from the model's choice distribution, and the
card's settings say so (:func:`sampling_settings`: ``temperature_settable`` and ``sampling``).

The same holds for the forced tool choice of the protocol: Claude Sonnet 5.5, Opus 5.5 and Fable/Mythos
5.1 (and their later point releases) answer a forced ``tool_choice`` (a named tool or ``any``) with a
400 (inspect_ai 0.3.285, ``model/_providers/util/util.py``: ``rejects_forced_tool_choice``). For those
models the ``choose`` tool is still offered, with ``tool_choice`` ``auto``; a reply without a tool call is
read by the text rule, and the card records the deviation (:func:`tool_choice_settings`).

An older Anthropic API version that still takes a temperature can be pinned with the setting
``anthropic_version`` (``--settings '{"anthropic_version": "2023-06-01"}'``, sent as the
``anthropic-version`` header); under it the paper's temperature 0 is sent again.
"""
from __future__ import annotations

import fnmatch
import re

#: the sampling parameters a service may refuse
SAMPLING_PARAMS = ("temperature", "top_p", "top_k")
#: the Anthropic API version from which temperature, top_p and top_k are rejected on every model
ANTHROPIC_NO_SAMPLING_FROM = "2026-10-21"
#: the card's wording
FIXED = "temperature {t:g}"
NOT_SETTABLE = "provider default sampling (temperature not settable)"
NOT_SENT = "provider default sampling (temperature not sent)"

#: ``(provider, model pattern, temperature settable, why)``: the first matching row wins. The
#: Anthropic row holds for the API version the pinned SDK sends; see :func:`temperature_settable`.
TEMPERATURE_TABLE = [
    ("anthropic", "*", False, "Messages API 2026-10-21 (anthropic SDK 2.14) rejects temperature, top_p and top_k "
                              "on every model"),
    ("openai", "gpt-5.6-terra*", False, "GPT-5.6 Terra rejects temperature (the paper used its default sampling)"),
    ("openai", "anthropic/*", False, "Claude behind an OpenAI-compatible gateway: the Messages API takes none"),
    ("openai", "claude-*", False, "Claude behind an OpenAI-compatible gateway: the Messages API takes none"),
    ("openai", "*", True, "OpenAI-compatible chat completions take temperature"),
]
#: a 400 that names a sampling parameter (error messages of Anthropic, OpenAI, vLLM, OpenRouter)
_SAMPLING_ERROR = re.compile(r"\b(temperature|top_p|top_k)\b")


def temperature_settable(provider: str, model: str, api_version: str | None = None) -> bool:
    """Whether ``provider``/``model`` takes a temperature (Anthropic: under ``api_version``).

    >>> temperature_settable("anthropic", "claude-sonnet-5", "2026-10-21")
    False
    >>> temperature_settable("anthropic", "claude-sonnet-5", "2023-06-01")
    True
    >>> temperature_settable("openai", "gpt-5.6-terra-2026"), temperature_settable("openai", "Qwen/Qwen3-8B")
    (False, True)
    """
    if provider == "anthropic" and api_version and api_version < ANTHROPIC_NO_SAMPLING_FROM:
        return True
    for prov, pattern, settable, _ in TEMPERATURE_TABLE:
        if prov == provider and fnmatch.fnmatchcase(model, pattern):
            return settable
    return True


def sampling_settings(provider: str, model: str, settings: dict | None, api_version: str | None = None) -> dict:
    """The card's ``temperature_settable`` and ``sampling`` for a request's settings.

    >>> sampling_settings("anthropic", "claude-sonnet-5", {"max_tokens": 64}, "2026-10-21")["sampling"]
    'provider default sampling (temperature not settable)'
    >>> sampling_settings("openai", "m", {"temperature": 0})
    {'temperature_settable': True, 'sampling': 'temperature 0'}
    """
    settable = temperature_settable(provider, model, api_version)
    t = (settings or {}).get("temperature")
    if isinstance(t, (int, float)):
        sampling = FIXED.format(t=t)
    else:
        sampling = NOT_SENT if settable else NOT_SETTABLE
    return {"temperature_settable": settable, "sampling": sampling}


def sampling_param_named(message: str) -> str | None:
    """The sampling parameter an error message names (None: not a sampling error)."""
    m = _SAMPLING_ERROR.search(str(message))
    return m.group(1) if m else None


def sampling_rejected_line(param: str, model: str, status: int, message: str) -> str:
    """The one line of a 400 that names a sampling parameter: what happened and what to do."""
    return (f"the server rejects the sampling parameter {param!r} for model {model!r} ({status}: {message}); "
            f"nothing was stored for it. This model's temperature cannot be fixed: rerun without the parameter "
            f"(--settings '{{\"{param}\": null}}'); the card then records provider default sampling")


#: models that answer a forced tool choice with a 400: Sonnet 5.5 and Opus 5.5 and their later 5.x point
#: releases, Fable/Mythos 5.1 and later (not the 5.0 releases, 1M-context suffixes such as ``-5-5m``, or dated
#: ids of earlier releases); the model id may carry a gateway prefix (``anthropic/claude-sonnet-5-5``)
FORCED_TOOL_CHOICE_REJECTED = re.compile(
    r"claude-(?:sonnet|opus)-5[-.](?:[5-9]|[1-9]\d)(?![0-9A-Za-z])|claude-(?:fable|mythos)-5[-.](?:[1-9]|[1-9]\d)(?![0-9A-Za-z])")
#: the card's wording of the tool choice
TOOL_CHOICE_FORCED = "forced choose tool (the protocol's)"
TOOL_CHOICE_AUTO = ("choose tool offered with tool_choice auto (the model rejects a forced tool choice); a reply "
                    "without a tool call is read by the text rule")
#: a 400 that names the tool choice
_TOOL_CHOICE_ERROR = re.compile(r"\btool_choice\b|forced tool", re.IGNORECASE)


def forced_tool_choice_accepted(model: str) -> bool:
    """Whether ``model`` takes the protocol's forced tool choice.

    >>> [forced_tool_choice_accepted(m) for m in ("claude-sonnet-5-5", "anthropic/claude-opus-5-6", "claude-fable-5-1")]
    [False, False, False]
    >>> [forced_tool_choice_accepted(m) for m in ("claude-sonnet-5", "claude-sonnet-5-1", "claude-sonnet-5-5m", "gpt-5.6-terra")]
    [True, True, True, True]
    """
    return FORCED_TOOL_CHOICE_REJECTED.search(model) is None


def tool_choice_settings(model: str, answer_format: str) -> dict:
    """The card's ``tool_choice_forced`` and ``tool_choice`` (empty where no tool is offered)."""
    if answer_format != "tool":
        return {}
    forced = forced_tool_choice_accepted(model)
    return {"tool_choice_forced": forced, "tool_choice": TOOL_CHOICE_FORCED if forced else TOOL_CHOICE_AUTO}


def names_tool_choice(message: str) -> bool:
    """Whether an error message is about the tool choice."""
    return _TOOL_CHOICE_ERROR.search(str(message)) is not None


def tool_choice_rejected_line(model: str, status: int, message: str) -> str:
    """The one line of a 400 that refuses the forced tool choice: what happened and what to do."""
    return (f"the server rejects a forced tool choice for model {model!r} ({status}: {message}); nothing was stored "
            f"for it. Rerun with --answer-format text (or json), whose answers are read from the reply's text; "
            f"the card records the deviation")
