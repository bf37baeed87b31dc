"""Subjects: ``replay`` (released answers), ``simulated`` (known reliance), ``anthropic`` and ``openai``
(live models through the official SDKs)."""
from __future__ import annotations

import os

from ...cells import Cell, expect_cell
from ..errors import CollectionError
from .anthropic import ANTHROPIC_SETTINGS, AnthropicSubject
from .base import Subject, request_key
from .openai import OPENAI_SETTINGS, OpenAISubject
from .replay import ReplaySubject, replay_model
from .sdk import SDKSubject, default_timeout, is_loopback, retry_after
from .simulated import SIMULATED_PRESETS, SimulatedParams, SimulatedSubject, read_patients

PROVIDERS = ("replay", "anthropic", "openai", "simulated")
PAID = ("anthropic", "openai")
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}

__all__ = ["ANTHROPIC_SETTINGS", "AnthropicSubject", "DEFAULT_KEY_ENV", "OPENAI_SETTINGS", "OpenAISubject", "PAID",
           "PROVIDERS", "ReplaySubject", "SDKSubject", "SIMULATED_PRESETS", "SimulatedParams", "SimulatedSubject",
           "Subject", "check_completion", "default_timeout", "is_loopback", "make_subject", "read_patients", "replay_model", "request_key", "retry_after"]


def check_completion(provider: str, answer_format: str, *, batch: bool = False) -> None:
    """Refuse ``--answer-format completion`` (``POST /v1/completions``) where it has no route: a provider other than
    an OpenAI-compatible server, and the batch paths (their requests are chat completions)."""
    if answer_format != "completion":
        return
    if provider != "openai":
        raise CollectionError(f"--answer-format completion needs an OpenAI-compatible server with /v1/completions "
                              f"(--provider openai: llama.cpp's server, vLLM, serving a base model), not --provider "
                              f"{provider}")
    if batch:
        raise CollectionError("--answer-format completion cannot go through --batch, --export-batch, --import-batch "
                              "or --prompt-cache (their requests are chat completions); run without them")


def make_subject(provider: str, model: str, cell: Cell | None, *, base_url: str | None = None,
                 api_key_env: str | None = None, timeout: float = 60.0, settings: dict | None = None,
                 sim_seed: int = 0, run: str | None = None, require_key: bool = True,
                 answer_format: str = "tool") -> Subject:
    """Build the subject of a provider (reads the API key from ``api_key_env``; a dry run needs none).

    ``cell`` serves the replay provider only (its released records); the others take None."""
    check_completion(provider, answer_format)
    cell = None if cell is None else expect_cell(cell)
    if provider == "replay":
        return ReplaySubject(model, cell, run)
    if provider == "simulated":
        return SimulatedSubject.preset(model, seed=sim_seed, **(settings or {}))
    if provider not in PAID:
        raise CollectionError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    if answer_format == "logprobs" and provider != "openai":
        raise CollectionError("--answer-format logprobs needs an OpenAI-compatible server (--provider openai: "
                              "vLLM, llama.cpp's server, OpenAI models that accept logprobs)")
    if not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):
        raise CollectionError(f"--timeout must be a positive number of seconds, not {timeout}")
    env = api_key_env or DEFAULT_KEY_ENV[provider]
    key = os.environ.get(env, "")
    if not key:
        if require_key and not is_loopback(base_url):
            raise CollectionError(f"no API key: set the environment variable {env} "
                                  f"(or name another variable with --api-key-env)")
        key = "not-needed"  # a dry run, or a local server (vLLM, Ollama, llama.cpp) that ignores the key
    cls = AnthropicSubject if provider == "anthropic" else OpenAISubject
    return cls(model, key, base_url=base_url, timeout=timeout, settings=settings, answer_format=answer_format)
