"""Claude through the official ``anthropic`` SDK (Messages API, forced ``choose`` tool).

The paper's request: one user message, no system message, ``max_tokens`` 64, temperature 0 (sent
in ``extra_body``: SDK 2.x has no ``temperature`` argument), the forced ``choose`` tool.
"""
from __future__ import annotations

from ... import config
from ..answers import Reply, patient_from_content, patient_from_tool_calls
from ..errors import Fatal, Transient
from ..jobs import Job
from ..redaction import REDACT
from .sdk import SDKSubject, preflight_status, reply_of, tokens_of

#: one user message, no system message, temperature 0, 64-token cap, forced tool
ANTHROPIC_SETTINGS = [("*", {"max_tokens": config.MAX_TOKENS, "temperature": 0})]


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

    def request_kwargs(self, prompt: str) -> dict:
        s = dict(self.settings)
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
        """``GET /v1/models/{model}``: the endpoint answers, the key is accepted, the model exists."""
        try:
            self._client.models.with_raw_response.retrieve(self.model)
        except self._sdk.NotFoundError:
            raise Fatal(f"model {self.model!r} is not served at {self.base_url or 'the Anthropic API'} (404)") from None
        except self._sdk.AnthropicError as exc:
            preflight_status(self._sdk, exc, "model")

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

