"""Prices and token estimates: the dry run's plan and the budget's reservations."""
from __future__ import annotations

import fnmatch
import json
import math
import os
from importlib import resources
from pathlib import Path

import pandas as pd

from .. import paths
from .errors import CollectionError
from .subjects import Subject, is_loopback

PRICES_ENV = "PROXY_AUDIT_PRICES"
#: the checkout's table; a package installed without the checkout uses the copy it ships
DEFAULT_PRICES = (paths.DATA / "prices.csv" if (paths.DATA / "prices.csv").is_file()
                  else Path(str(resources.files("analysis") / "resources" / "prices.csv")))
#: rough output-token expectation per call for the dry-run estimate (forced tool call, no reasoning),
#: and for models that reason before the tool call (default medium effort): ASSUMED figures
EST_OUTPUT_TOKENS = {"anthropic": 40, "openai": 25}
EST_REASONING_OUTPUT_TOKENS = 600
#: tokens the API adds to every request for the forced tool (definition + tool-use preamble): ASSUMED
EST_TOOL_OVERHEAD = {"anthropic": 400, "openai": 80}
CHARS_PER_TOKEN = 3.0  # numbers-heavy prompts tokenise densely
#: input tokens the server counts per input token estimated above, by endpoint (:func:`endpoint_kind`). Hosted
#: APIs: 1.0, ASSUMED (no released record carries the server's usage). A server on this machine (127.0.0.1,
#: localhost): measured from llama-cpp-python's ``usage`` for SmolLM2-135M over the committed smoke card
#: (audit_out/example/report_card.json: the server's input tokens over the estimate of the same prompts; small
#: models' tokenizers split numbers into single digits, and chatml-function-calling adds the tool to the prompt).
#: tests/test_token_calibration.py recomputes it from that card.
INPUT_TOKEN_FACTOR = {"anthropic": 1.0, "openai": 1.0, "local": 2.2237}
#: answers after which the remaining tokens are re-estimated from the server's ``usage``
REESTIMATE_AFTER = 20


def load_prices(override: str | os.PathLike | None = None) -> pd.DataFrame:
    """The price table: override rows (``--prices`` file or ``$PROXY_AUDIT_PRICES``) first, then
    ``data/prices.csv``. Columns ``provider, model, input_usd_per_mtok, output_usd_per_mtok, note``;
    ``model`` may be an ``fnmatch`` pattern. An override may be CSV with those columns or JSON:
    ``{"provider/model": [input, output]}`` or a list of row objects.
    """
    cols = ["provider", "model", "input_usd_per_mtok", "output_usd_per_mtok", "note"]
    frames = []
    override = override or os.environ.get(PRICES_ENV) or None
    if override:
        path = Path(override)
        if not path.is_file():
            raise CollectionError(f"price table {path} not found")
        try:
            if path.suffix.lower() == ".json":
                obj = json.loads(path.read_text())
                if isinstance(obj, dict):
                    rows = []
                    for k, v in obj.items():
                        prov, _, model = k.partition("/")
                        rows.append({"provider": prov, "model": model, "input_usd_per_mtok": float(v[0]),
                                     "output_usd_per_mtok": float(v[1]), "note": f"override {path.name}"})
                    obj = rows
                frames.append(pd.DataFrame(obj))
            else:
                frames.append(pd.read_csv(path))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise CollectionError(f"price table {path} unreadable: {exc}") from None
    frames.append(pd.read_csv(DEFAULT_PRICES))
    df = pd.concat(frames, ignore_index=True)
    if "note" not in df:
        df["note"] = ""
    missing = [c for c in cols[:4] if c not in df]
    if missing:
        raise CollectionError(f"price table lacks columns {missing}; expected {cols}")
    return df[cols]


def price_for(prices: pd.DataFrame, provider: str, model: str) -> tuple[float, float] | None:
    """``(input, output)`` USD per million tokens of the first matching row, or None."""
    for r in prices.itertuples(index=False):
        if r.provider == provider and fnmatch.fnmatchcase(model, str(r.model)):
            return float(r.input_usd_per_mtok), float(r.output_usd_per_mtok)
    return None


def cost_of(price: tuple[float, float] | None, input_tokens: int, output_tokens: int) -> float | None:
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1e6


def token_cap(subject: Subject) -> int | None:
    s = getattr(subject, "settings", {}) or {}
    return s.get("max_completion_tokens") or s.get("max_tokens")


def endpoint_kind(subject: Subject) -> str:
    """``local`` for a server on this machine (``--base-url`` on 127.0.0.1 / localhost), else the provider."""
    return "local" if is_loopback(getattr(subject, "base_url", None)) else subject.provider


def calibrated_input(tokens: int, subject: Subject) -> int:
    """An input estimate times the endpoint's :data:`INPUT_TOKEN_FACTOR` (the plan's prior before any usage)."""
    return int(math.ceil(tokens * INPUT_TOKEN_FACTOR.get(endpoint_kind(subject), 1.0)))


def raw_input_estimate(prompt: str, provider: str) -> int:
    """Input tokens of one call before calibration: characters / :data:`CHARS_PER_TOKEN` plus the tool overhead."""
    return int(math.ceil(len(prompt) / CHARS_PER_TOKEN)) + EST_TOOL_OVERHEAD[provider]


def estimate_tokens(prompt: str, subject: Subject) -> tuple[int, int, int]:
    """Rough ``(input, expected output, output cap)`` tokens of one call (dry run and budget); the dry run's plan
    calibrates the input per endpoint (:func:`calibrated_input`)."""
    if not subject.paid:
        return 0, 0, 0
    tin = raw_input_estimate(prompt, subject.provider)
    cap = token_cap(subject) or 4096
    expected = EST_OUTPUT_TOKENS[subject.provider]
    if cap > 256:  # a reasoning model: the cap leaves room for reasoning tokens
        expected = min(cap, EST_REASONING_OUTPUT_TOKENS)
    return tin, min(expected, cap), cap



def check_price(price_in: float | None, price_out: float | None) -> tuple[float, float] | None:
    """``(input, output)`` from ``--price-in``/``--price-out`` (both or neither; finite, >= 0)."""
    if price_in is None and price_out is None:
        return None
    if price_in is None or price_out is None:
        raise CollectionError("--price-in and --price-out go together (USD per million tokens; 0 0 for a local model)")
    for name, v in (("--price-in", price_in), ("--price-out", price_out)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise CollectionError(f"{name} must be a finite number >= 0, not {v}")
    return float(price_in), float(price_out)


def check_max_cost(max_cost: float | None) -> float | None:
    """``--max-cost`` must be finite and >= 0 (NaN would turn the budget off)."""
    if max_cost is None:
        return None
    if not (isinstance(max_cost, (int, float)) and math.isfinite(max_cost) and max_cost >= 0):
        raise CollectionError(f"--max-cost must be a finite number >= 0 (USD), not {max_cost}")
    return float(max_cost)


class TokenModel:
    """Per-call token estimates, re-estimated from the server's ``usage`` after :data:`REESTIMATE_AFTER` answers.

    ``scale_in`` multiplies the character-based input estimate; ``out`` replaces the assumed output
    tokens by the mean observed (never above the cap). :meth:`worst` is what an in-flight call is
    reserved at: the input estimate plus the output cap.
    """

    def __init__(self, subject: Subject):
        self.subject = subject
        self.scale_in = 1.0
        self.out: float | None = None
        self.n = 0
        self._est_in = self._in = self._out = 0
        self.reestimated = False

    def estimate(self, prompt: str) -> tuple[int, int, int]:
        tin, tout, cap = estimate_tokens(prompt, self.subject)
        if self.reestimated:
            tin = int(math.ceil(tin * self.scale_in))
            tout = min(cap, int(math.ceil(self.out or 0)))
        return tin, tout, cap

    def worst(self, prompt: str) -> tuple[int, int]:
        tin, _, cap = self.estimate(prompt)
        return tin, cap

    def observe(self, prompt: str, input_tokens: int, output_tokens: int) -> None:
        """Count one answer's actual usage; re-estimate once :data:`REESTIMATE_AFTER` answers are in."""
        if not self.subject.paid or (input_tokens <= 0 and output_tokens <= 0):
            return
        est_in, _, _ = estimate_tokens(prompt, self.subject)
        self.n += 1
        self._est_in += est_in
        self._in += input_tokens
        self._out += output_tokens
        if self.n >= REESTIMATE_AFTER:
            self.scale_in = max(self._in / max(self._est_in, 1), 0.05)
            self.out = self._out / self.n
            self.reestimated = True

    def summary(self) -> dict:
        return {"answers_observed": self.n, "reestimated": self.reestimated,
                "input_actual_over_estimate": round(self._in / self._est_in, 4) if self._est_in else None,
                "output_mean_actual": round(self._out / self.n, 2) if self.n else None}
