"""Which providers and models take a temperature: the one table (issue 20).

The paper's protocol asks for temperature 0 (§4.8). Some services no longer take it: the Anthropic
Messages API, from API version ``2026-10-21`` (the version the pinned ``anthropic`` SDK 2.14 sends,
``anthropic/_constants.py``), rejects ``temperature``, ``top_p`` and ``top_k`` on every model, and
``messages.create`` of that SDK has no such argument. Where the temperature cannot be fixed, no
sampling parameter is sent, each answer is one draw from the model's choice distribution, and the
card's settings say so (:func:`sampling_settings`: ``temperature_settable`` and ``sampling``).

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
