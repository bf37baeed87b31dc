"""Claude through the official ``anthropic`` SDK (Messages API, forced ``choose`` tool).

The paper's request: one user message, no system message, ``max_tokens`` 64, temperature 0, the
forced ``choose`` tool. Under the API version the pinned SDK sends (``2026-10-21``) the Messages
API rejects ``temperature``, ``top_p`` and ``top_k`` on every model, so no sampling parameter is
sent and the card records provider default sampling (:mod:`.sampling`, issue 20). The setting
``anthropic_version`` pins an older API version (the ``anthropic-version`` header); under one older
than ``2026-10-21`` the paper's temperature 0 is sent (in ``extra_body``: the SDK has no argument).
"""
from __future__ import annotations

from ... import config
from ..answers import Reply, patient_from_content, patient_from_tool_calls
from ..errors import ModelNotServed, Transient
from ..jobs import Job
from ..redaction import REDACT
from .sampling import temperature_settable
from .sdk import SDKSubject, not_served_line, preflight_status, reply_of, settings_for, tokens_of, warn_once

#: one user message, no system message, 64-token cap, forced tool; no sampling parameter (the API
#: version the SDK sends rejects it; see :mod:`.sampling`)
ANTHROPIC_SETTINGS = [("*", {"max_tokens": config.MAX_TOKENS})]
#: the paper's temperature, sent only under an older API version that takes it (setting ``anthropic_version``)
PAPER_TEMPERATURE = 0


def _sdk():
    """The ``anthropic`` SDK, imported on first use (absolute import: this module is
    analysis.collection.subjects.anthropic)."""
    import anthropic  # heavy, optional
    return anthropic


class AnthropicSubject(SDKSubject):
    """Claude through the official SDK (Messages API, forced ``choose`` tool)."""

    provider = "anthropic"
    settings_table = ANTHROPIC_SETTINGS

    def make_client(self, api_key, base_url, timeout, http):
        sdk = _sdk()
        return sdk, sdk.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout,
                                  http_client=http)

    def error_base(self):
        return _sdk().AnthropicError

    def default_settings(self, model: str, overrides: dict) -> dict:
        """The table's row, plus the paper's temperature 0 where the pinned API version takes one."""
        s = settings_for(self.settings_table, model)
        if temperature_settable(self.provider, model, overrides.get("anthropic_version") or self.sdk_version()):
            s["temperature"] = PAPER_TEMPERATURE
        return s

    @staticmethod
    def sdk_version() -> str:
        """The ``anthropic-version`` the pinned SDK sends."""
        return str(_sdk()._constants.ANTHROPIC_API_VERSION)

    def api_version(self) -> str:
        return str(self.settings.get("anthropic_version") or self.sdk_version())

    def _headers(self) -> dict:
        v = self.settings.get("anthropic_version")
        return {"extra_headers": {"anthropic-version": str(v)}} if v else {}

    def request_kwargs(self, prompt: str) -> dict:
        s = dict(self.settings)
        s.pop("anthropic_version", None)  # a header, not a body field
        s.update(self._headers())
        extra = dict(s.pop("extra_body", {}) or {})
        if "temperature" in s:  # SDK 2.x has no temperature argument: send it in the body
            extra["temperature"] = s.pop("temperature")
        kw = {"model": self.model, "max_tokens": s.pop("max_tokens", config.MAX_TOKENS),
              "messages": [{"role": "user", "content": prompt}], **s}
        if self.answer_format == "tool":
            kw.update(tools=[self.tool], tool_choice=self.tool_choice)
        if extra:
            kw["extra_body"] = extra
        return kw

    def preflight(self) -> None:
        """``GET /v1/models/{model}``: the endpoint answers, the key is accepted, the model exists and is
        not retired (``lifecycle``); a deprecated model is a warning with its retirement date; the
        context window (``max_input_tokens``) where the server reports it."""
        where = self.base_url or "the Anthropic API"
        try:
            raw = self._client.models.with_raw_response.retrieve(self.model, **self._headers())
        except self._sdk.AnthropicError as exc:
            preflight_status(self._sdk, exc, f"/v1/models/{self.model}", self.model, where)
            return
        try:
            info = raw.http_response.json()
        except ValueError:
            return  # not the Models API's JSON: a proxy's page; nothing to check
        info = info if isinstance(info, dict) else {}
        lifecycle, retires = info.get("lifecycle"), info.get("retires_at")
        if lifecycle == "retired":
            raise ModelNotServed(not_served_line(self.model, f"{where} lists it as retired"))
        if lifecycle == "deprecated":
            warn_once(f"model {self.model} is deprecated" + (f" and retires on {retires}" if retires else "")
                      + "; a later rerun may find it retired")
        ctx = info.get("max_input_tokens")
        if isinstance(ctx, int) and ctx > 0:
            self._context = ctx

    def ask(self, job: Job) -> Reply:
        body = self.call(self._client.messages.with_raw_response.create, **self.request_kwargs(self.prompt_of(job)))
        blocks = body.get("content")
        if not isinstance(blocks, list):
            raise Transient("bad_response", 200, detail="reply without a content list")
        calls, texts = [], []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                calls.append((str(block.get("name", "")), block.get("input")))
            elif block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
        patient, raw = patient_from_tool_calls(calls) if self.answer_format == "tool" else (None, "")
        if patient is None:
            text = "\n".join(texts)
            patient = patient_from_content(text, self.answer_format)
            raw = raw or text
        usage = body.get("usage")
        return reply_of(patient, body, tokens_of(usage, "input_tokens"), tokens_of(usage, "output_tokens"),
                        REDACT(raw), str(body.get("stop_reason") or ""))

