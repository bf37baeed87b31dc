"""The request inspect_ai sends, against the protocol's: fingerprint and deviations (issue 24). Pure Python.

* :func:`request_template`: a logged request (``ModelEvent.call.request``) with the prompt text
  replaced by a placeholder and inspect's per-request id header (``x-irid``) removed: what every
  job of a run shares. Its hash, with the model, is the ledger's request key of an inspect run
  (:func:`analysis.collection.request_key` on :class:`analysis.inspect_bridge.logs.InspectSubject`):
  a fingerprint of the request actually sent, never of the generation config, and never equal to a
  protocol run's key (those hash the provider name ``openai`` / ``anthropic``, these ``inspect``).
* :func:`wire_body`: the JSON body that reached the server: the logged request without
  ``extra_headers``, with ``extra_body`` merged in, plus what the provider adds at call time outside
  the logged request (:data:`WIRE_ONLY`; e.g. inspect's Anthropic provider calls
  ``messages.create(**request, stream=False)``, so ``stream: false`` is sent but not logged).
* :func:`protocol_body`: the protocol's request for the same model (the body
  :class:`analysis.collection.OpenAISubject` / :class:`analysis.collection.AnthropicSubject` send).
* :func:`deviations`: every difference of the two, one entry per field, by category (tool schema,
  sampling parameters, streaming, message structure, headers).
"""
from __future__ import annotations

import hashlib
import json

from .. import config, prompts
from ..collection.jobs import Job
from ..collection.subjects.anthropic import ANTHROPIC_SETTINGS
from ..collection.subjects.openai import OPENAI_SETTINGS
from ..collection.subjects.sdk import settings_for

#: the inspect task's registered name (``inspect eval analysis/proxy_audit``); a log of another task is refused
TASK_NAME = "proxy_audit"
#: metadata every sample carries (a log without them is refused)
SAMPLE_METADATA = ("cell", "display", "arm", "pair", "order", "i", "j", "prompt_sha256", "battery", "pairs")
#: inspect requires a description on every tool parameter; the protocol's ``patient`` has none (a deviation)
PARAM_DESCRIPTION = "1 or 2"
#: inspect's per-request id header (``HttpxHooks.REQUEST_ID_HEADER``): differs on every request, not part of the key
VOLATILE_HEADERS = ("x-irid",)
#: keys of a logged message that differ per sample (``mockllm`` logs inspect's own messages, with their ids)
VOLATILE_MESSAGE_KEYS = ("id",)
PROMPT = "<prompt>"
#: fields a provider sends outside the logged request (read in inspect_ai 0.3.285's provider code;
#: tests/test_inspect_bridge.py checks them against the bodies a fake server received)
WIRE_ONLY = {"anthropic": {"stream": False}}
#: inspect model APIs that speak the Anthropic Messages API; every other is compared with the OpenAI request
ANTHROPIC_APIS = ("anthropic",)
SAMPLING = ("temperature", "top_p", "top_k", "max_tokens", "max_completion_tokens", "seed", "n", "stop",
            "frequency_penalty", "presence_penalty", "logit_bias", "logprobs", "top_logprobs", "reasoning_effort",
            "parallel_tool_calls", "thinking", "output_config", "enable_thinking", "prompt_logprobs")
CATEGORIES = {"tools": "tool schema", "tool_choice": "tool choice", "stream": "streaming",
              "stream_options": "streaming", "messages": "message structure", "system": "message structure",
              "input": "message structure",
              "extra_headers": "headers", "model": "model"}


def sample_id(job: Job) -> str:
    """A job's sample id: its ledger identity without the request, ``cell:display:arm:pair:order``.

    >>> sample_id(Job("k12_LH_neutral_absent_zero", "numeric", "factual", 3, 10, 20, 1, "p", "s"))
    'k12_LH_neutral_absent_zero:numeric:factual:3:1'
    """
    return f"{job.cell}:{job.display}:{job.arm}:{job.pair_id}:{job.order}"


def cache_policy_args(cache) -> dict | None:
    """``CachePolicy`` arguments of the task's ``cache`` option (None: no cache).

    >>> cache_policy_args(False), cache_policy_args("true"), cache_policy_args(True), cache_policy_args("30D")
    (None, {'expiry': None}, {'expiry': None}, {'expiry': '30D'})
    """
    if cache in (None, False, "", "false", "False", "no", "0", 0):
        return None
    if cache in (True, "true", "True", "yes", "1", 1, "never"):
        return {"expiry": None}
    return {"expiry": str(cache)}


def api_of(model: str) -> str:
    """The inspect model API of a model name (``openai-api/fake/m`` -> ``openai-api``)."""
    return model.split("/", 1)[0]


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _messages(request: dict) -> list:
    """The request's messages: ``messages`` (chat completions, Anthropic), else ``input`` (OpenAI Responses API,
    which inspect's ``openai`` provider uses for many models)."""
    if "messages" in request or "input" not in request:
        return request.get("messages") or []
    inp = request["input"]
    return [{"role": "user", "content": inp}] if isinstance(inp, str) else list(inp or [])


def user_text(request: dict) -> str:
    """The text of the request's user messages (the prompt sent).

    >>> user_text({"messages": [{"role": "user", "content": "a"}]}), user_text({"input": [{"role": "user",
    ...     "content": [{"type": "input_text", "text": "b"}]}]})
    ('a', 'b')
    """
    return "".join(_text(m.get("content")) for m in _messages(request)
                   if isinstance(m, dict) and m.get("role") == "user")


def _placeholder(content):
    if isinstance(content, str):
        return PROMPT
    if isinstance(content, list):
        return [{**p, "text": PROMPT} if isinstance(p, dict) and "text" in p else p for p in content]
    return content


def request_template(request: dict) -> dict:
    """The logged request without what varies per job: the prompt text (a placeholder), message ids and the
    request id header."""
    out = json.loads(json.dumps(request, default=str))
    field = "messages" if "messages" in out or "input" not in out else "input"
    if isinstance(out.get(field), str):
        out[field] = PROMPT
    else:
        out[field] = [{**{k: v for k, v in m.items() if k not in VOLATILE_MESSAGE_KEYS},
                       "content": _placeholder(m.get("content"))} if isinstance(m, dict) else m
                      for m in out.get(field) or []]
    headers = out.get("extra_headers")
    if isinstance(headers, dict):
        headers = {k: v for k, v in headers.items() if k.lower() not in VOLATILE_HEADERS}
        if headers:
            out["extra_headers"] = headers
        else:
            out.pop("extra_headers")
    return out


def fingerprint(template: dict) -> str:
    """SHA-256 of a request template's canonical JSON."""
    return hashlib.sha256(json.dumps(template, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def wire_body(template: dict, api: str) -> dict:
    """The JSON body sent: without ``extra_headers`` (headers, not body), ``extra_body`` merged, plus
    :data:`WIRE_ONLY`."""
    body = {k: v for k, v in template.items() if k not in ("extra_headers", "extra_body", "extra_query")}
    body.update(template.get("extra_body") or {})
    body.update(WIRE_ONLY.get(api, {}))
    return body


def protocol_body(api: str, model: str) -> dict:
    """The protocol's request body for ``model`` (prompt as a placeholder): OpenAI chat completions, or the
    Anthropic Messages API for :data:`ANTHROPIC_APIS`."""
    if api in ANTHROPIC_APIS:
        s = settings_for(ANTHROPIC_SETTINGS, model)
        s.update(s.pop("extra_body", None) or {})
        return {"model": model, "messages": [{"role": "user", "content": PROMPT}], **s,
                "tools": [prompts.tool_spec("anthropic")], "tool_choice": prompts.tool_choice("anthropic")}
    s = settings_for(OPENAI_SETTINGS, model)
    s.update(s.pop("extra_body", None) or {})
    return {"model": model, "messages": [{"role": "user", "content": PROMPT}], **s,
            "tools": [prompts.tool_spec("openai")], "tool_choice": prompts.tool_choice("openai")}


def _flatten(obj, prefix: str = "") -> dict:
    if isinstance(obj, dict) and obj:
        out = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(obj, list) and obj:
        out = {}
        for n, v in enumerate(obj):
            out.update(_flatten(v, f"{prefix}[{n}]"))
        return out
    return {prefix: obj}


def category(path: str) -> str:
    """The category of a request field (``tools[0].function.strict`` -> ``tool schema``)."""
    head = path.split(".", 1)[0].split("[", 1)[0]
    if "cache_control" in path:
        return "prompt caching"
    if head in SAMPLING:
        return "sampling parameters"
    return CATEGORIES.get(head, "other")


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return float(a) == float(b)
    return a == b


def deviations(sent: dict, protocol: dict, ignore: tuple[str, ...] = ("model",)) -> list[dict]:
    """Every field where the sent body differs from the protocol's: ``field, category, kind, protocol, sent``.

    >>> [d["field"] + " " + d["kind"] for d in deviations({"a": 1, "tools": [{"x": 2}]}, {"a": 1, "temperature": 0})]
    ['temperature removed', 'tools[0].x added']
    """
    fs, fp = _flatten(sent), _flatten(protocol)
    out = []
    for path in sorted(set(fs) | set(fp)):
        if path.split(".", 1)[0].split("[", 1)[0] in ignore:
            continue
        if path in fs and path in fp:
            if _same(fs[path], fp[path]):
                continue
            kind = "changed"
        else:
            kind = "added" if path in fs else "removed"
        out.append({"field": path, "category": category(path), "kind": kind,
                    "protocol": fp.get(path), "sent": fs.get(path)})
    return out


def statement(d: dict) -> str:
    """One sentence for a deviation."""
    if d["kind"] == "added":
        return f"{d['category']}: {d['field']} = {json.dumps(d['sent'])} sent, not in the protocol's request"
    if d["kind"] == "removed":
        return f"{d['category']}: {d['field']} = {json.dumps(d['protocol'])} of the protocol not sent"
    return (f"{d['category']}: {d['field']} sent as {json.dumps(d['sent'])}, "
            f"the protocol sends {json.dumps(d['protocol'])}")


def config_not_sent(config_dict: dict, sent: dict) -> list[str]:
    """Sampling settings the run's generate config names that the sent body lacks (the log says them, the server
    never saw them), e.g. the temperature inspect's Anthropic provider drops."""
    out = []
    for k in ("temperature", "top_p", "top_k", "max_tokens", "seed"):
        v = config_dict.get(k)
        if v is not None and k not in sent and not (k == "max_tokens" and "max_completion_tokens" in sent):
            out.append(f"the log's generate config says {k} = {json.dumps(v)}, but no {k} was sent")
    return out


def protocol_config() -> dict:
    """The protocol's defaults for the task's ``GenerateConfig``: its sampling settings, and no prompt caching
    (inspect marks Anthropic requests with ``cache_control`` unless ``cache_prompt`` is False; the protocol
    does not)."""
    return {"max_tokens": config.MAX_TOKENS, "temperature": 0.0, "cache_prompt": False}


def deviation_report(template: dict, api: str, model: str, configs: list[dict] = ()) -> dict:
    """The card's ``deviations`` section of an inspect run: every difference of the body sent from the
    protocol's (tool schema, sampling parameters, streaming, message structure, headers), and the
    settings the log names that were never sent."""
    sent = wire_body(template, api)
    proto = protocol_body(api, str(template.get("model") or model))
    fields = [{**d, "statement": statement(d)} for d in deviations(sent, proto)]
    not_sent = sorted({s for c in configs for s in config_not_sent(c, sent)})
    family = "Anthropic Messages" if api in ANTHROPIC_APIS else "OpenAI chat completions"
    return {"source": "inspect_ai", "api": api, "model": model, "compared_with": f"the protocol's {family} request",
            "protocol": not fields, "fields": fields, "log_config_not_sent": not_sent,
            "wire_only": WIRE_ONLY.get(api, {}),
            "statement": (f"Collected through inspect_ai ({api}): the request sent differs from the protocol's in "
                          f"{len(fields)} field" + ("" if len(fields) == 1 else "s") + " (listed under deviations)."
                          if fields else f"Collected through inspect_ai ({api}): the request sent is the protocol's.")}
