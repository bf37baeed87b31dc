"""Any OpenAI-compatible chat-completions endpoint (GPT, OpenRouter, vLLM, Ollama, llama.cpp) through
the official ``openai`` SDK, with a forced function tool; per-model settings in :data:`OPENAI_SETTINGS`."""
from __future__ import annotations

import re

from ... import config
from ..answers import answer_token_probabilities, patient_from_text  # --answer-format logprobs
from ..answers import Reply, patient_from_content, patient_from_tool_calls
from ..errors import Fatal, ModelNotServed, Transient
from ..jobs import Job
from .sdk import SDKSubject, context_from_entry, not_served_line, preflight_status, reply_of, tokens_of

#: ``--answer-format logprobs``: the answer as one token (1 or 2) with its top log-probabilities (issue 20)
LOGPROBS_REQUEST = {"max_tokens": config.LOGPROBS_MAX_TOKENS, "logprobs": True, "top_logprobs": config.LOGPROBS_TOP}
#: ``--answer-format completion``: ``POST /v1/completions`` for one token with its top log-probabilities (the
#: completions API's ``logprobs`` is an integer top-k); scored like lm-evaluation-harness multiple choice (issue 23)
COMPLETION_REQUEST = {"max_tokens": config.LOGPROBS_MAX_TOKENS, "logprobs": config.COMPLETION_LOGPROBS}
#: today's OpenAI API refuses a chat model on ``/v1/completions`` with a 404 that says so
_CHAT_MODEL_REFUSAL = re.compile(r"(?i)\(404\).*(chat model|not supported in the v1/completions)")

#: first matching ``fnmatch`` pattern on the requested model id wins
OPENAI_SETTINGS = [
    # GPT-5.6 Terra: temperature is rejected -> default sampling; cap max(64, 2048); no reasoning effort
    ("gpt-5.6-terra*", {"max_completion_tokens": max(config.MAX_TOKENS, 2048)}),
    # Qwen through OpenRouter (representation control): default sampling with a reasoning budget.
    # UNRESOLVED in the spec (exact budget); we send default sampling and a 2048-token cap.
    ("qwen/qwen3.7-max*", {"max_tokens": 2048}),
    # Qwen3.7-max battery: temperature 0, thinking disabled through the extra body
    ("qwen3.7-max*", {"temperature": 0, "max_tokens": config.MAX_TOKENS,
                      "extra_body": {"enable_thinking": False}}),
    # DeepSeek through OpenRouter: temperature 0, forced tool, no cap stated
    ("deepseek/deepseek-v4-flash*", {"temperature": 0}),
    # Claude behind an OpenAI-compatible gateway (e.g. OpenRouter): no temperature (sampling.py, issue 20)
    ("anthropic/*", {"max_tokens": config.MAX_TOKENS}),
    ("claude-*", {"max_tokens": config.MAX_TOKENS}),
    # DeepSeek-V4-Flash battery and any other endpoint: temperature 0, 64-token cap
    ("*", {"temperature": 0, "max_tokens": config.MAX_TOKENS}),
]


def _sdk():
    """The ``openai`` SDK, imported on first use (absolute import: this module is
    analysis.collection.subjects.openai)."""
    import openai  # heavy, optional
    return openai


class OpenAISubject(SDKSubject):
    """Any OpenAI-compatible chat-completions endpoint with a forced function tool."""

    provider = "openai"
    settings_table = OPENAI_SETTINGS

    def make_client(self, api_key, base_url, timeout, http):
        sdk = _sdk()
        return sdk, sdk.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout,
                               http_client=http)

    def error_base(self):
        return _sdk().OpenAIError

    def request_kwargs(self, prompt: str) -> dict:
        kw = {"model": self.model, "messages": [{"role": "user", "content": prompt}], **self.settings}
        if self.answer_format == "tool":
            kw.update(tools=[self.tool], tool_choice=self.tool_choice)
        elif self.answer_format == "logprobs":
            kw.pop("max_completion_tokens", None)
            kw.update(LOGPROBS_REQUEST)
        elif self.answer_format == "completion":  # a text prompt, no messages (POST /v1/completions)
            kw = {"model": self.model, "prompt": prompt, **self.settings}
            kw.pop("max_completion_tokens", None)
            kw.update(COMPLETION_REQUEST)
        return kw

    def request_settings(self) -> dict:
        s = super().request_settings()
        if self.answer_format == "logprobs":  # part of the request key, like the answer format itself
            s["logprobs_request"] = dict(LOGPROBS_REQUEST)
        elif self.answer_format == "completion":
            s.update(messages=None, endpoint="/v1/completions", completion_request=dict(COMPLETION_REQUEST))
        return s

    def preflight(self) -> None:
        """``GET /models``: the endpoint answers, the key is accepted, the model is listed (and its
        context window, where the server reports one)."""
        try:
            body = self._client.models.with_raw_response.list().http_response.json()
        except self._sdk.OpenAIError as exc:
            preflight_status(self._sdk, exc, "/models", self.model, self.base_url or "the OpenAI API")
            return
        except ValueError:
            return  # not a JSON list: a proxy without the route
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not data:
            return
        ids = {str(e.get("id")): e for e in data if isinstance(e, dict)}
        entry = ids.get(self.model) or next((e for i, e in ids.items() if i.startswith(self.model + ":")), None)
        if entry is None:
            listed = ", ".join(sorted(ids)[:8]) + (" ..." if len(ids) > 8 else "")
            raise ModelNotServed(not_served_line(self.model, f"{self.base_url or 'the OpenAI API'} serves {listed}"))
        self._context = context_from_entry(entry)

    def ask(self, job: Job) -> Reply:
        if self.answer_format == "completion":
            return self.ask_completion(job)
        body = self.call(self._client.chat.completions.with_raw_response.create,
                         **self.request_kwargs(self.prompt_of(job)))
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise Transient("bad_response", 200, detail="reply without choices")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        calls = []
        for call in message.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                calls.append((str(fn.get("name", "")), fn.get("arguments")))
        patient, raw = patient_from_tool_calls(calls) if self.answer_format == "tool" else (None, "")
        text = message.get("content") or ""
        if patient is None:
            patient = patient_from_content(str(text), self.answer_format)
            raw = raw or str(text)
        usage = body.get("usage")
        reply = reply_of(patient, body, tokens_of(usage, "prompt_tokens"), tokens_of(usage, "completion_tokens"),
                         raw, str(choice.get("finish_reason") or ""))
        if self.answer_format == "logprobs":
            reply = logprob_reply(reply, choice, str(text))
        return reply

    def ask_completion(self, job: Job) -> Reply:
        """``--answer-format completion``: one token after the completion prompt; the answer and P(patient 1) from
        its top log-probabilities (:func:`logprob_reply`), as for ``logprobs``."""
        try:
            body = self.call(self._client.completions.with_raw_response.create,
                             **self.request_kwargs(self.prompt_of(job)))
        except Fatal as exc:
            if _CHAT_MODEL_REFUSAL.search(str(exc)):
                raise Fatal(chat_model_line(self.model, self.base_url)) from None
            raise
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise Transient("bad_response", 200, detail="reply without choices")
        choice = choices[0]
        text = str(choice.get("text") or "")
        usage = body.get("usage")
        reply = reply_of(None, body, tokens_of(usage, "prompt_tokens"), tokens_of(usage, "completion_tokens"),
                         text, str(choice.get("finish_reason") or ""))
        return logprob_reply(reply, choice, text)


def chat_model_line(model: str, base_url: str | None = None) -> str:
    """The one line of a chat model refused on ``/v1/completions`` (today's OpenAI API answers 404)."""
    return (f"{model} is a chat model: {base_url or 'the OpenAI API'} refused it on /v1/completions (404); "
            f"--answer-format completion is for base models served for text completion (llama.cpp's server, vLLM); "
            f"use --answer-format logprobs for a chat model")


def first_token_logprobs(choice: dict) -> tuple[str | None, list]:
    """``(sampled token, top log-probabilities)`` of a choice's first generated token.

    Reads the chat-completions shape ``logprobs.content[0].{token, top_logprobs: [{token, logprob}]}``
    (OpenAI, vLLM, llama.cpp's server) and the completions shape ``logprobs.{tokens, top_logprobs:
    [{token: logprob}]}`` (older llama-cpp-python); ``(None, [])`` when the reply has none.
    """
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        return None, []
    content = lp.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        first = content[0]
        top = first.get("top_logprobs")
        return (None if first.get("token") is None else str(first.get("token"))), top if isinstance(top, list) else []
    tokens, top = lp.get("tokens"), lp.get("top_logprobs")
    if isinstance(top, list) and top and isinstance(top[0], dict):
        token = str(tokens[0]) if isinstance(tokens, list) and tokens else None
        return token, [{"token": k, "logprob": v} for k, v in top[0].items()]
    return None, []


def logprob_reply(reply: Reply, choice: dict, text: str) -> Reply:
    """``--answer-format logprobs``: the sampled answer token and P(patient 1) with the mass outside 1 and 2.

    The sampled choice is the first token when it reads 1 or 2 (else the content's first standalone
    1 or 2); P(patient 1) is normalised over the two answer tokens of the first token's top
    log-probabilities (:func:`analysis.collection.answers.answer_token_probabilities`)."""
    token, top = first_token_logprobs(choice)
    sampled = patient_from_text(token.strip()) if token is not None else None
    reply.patient = sampled if sampled is not None else patient_from_text(text)
    reply.p_first, reply.p_outside = answer_token_probabilities(top)
    return reply
