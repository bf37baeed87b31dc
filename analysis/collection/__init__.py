"""Collection: prompts in, per-call records out (paper §4.8, Supplementary Notes 4 and 15; spec
PROTOCOL-synthetic §6-§7).

One interface, four *subjects* (:mod:`.subjects`): ``replay`` serves the released answers;
``anthropic`` and ``openai`` reach live models through the official SDKs with the paper's request
(one user message, no system message, the forced ``choose`` tool; ``--answer-format json|text`` for
servers that refuse a forced tool); ``simulated`` is an offline reader with known reliance.

Layout: :mod:`.jobs` (the calls) · :mod:`.answers` (parsing) · :mod:`.redaction` · :mod:`.subjects`
· :mod:`.pricing` · :mod:`.ledger` (SQLite, one writer, storage faults) · :mod:`.retries` ·
:mod:`.runner` (:func:`collect`) · :mod:`.plan` (the dry run) · :mod:`.outputs` (records, metadata)
· :mod:`.replay` (replay check, simulated coverage) · :mod:`.commands` (``collect``/``estimate``).
"""
from __future__ import annotations

from .answers import ANSWER_FORMATS, PROBABILITY_FORMATS, Reply, patient_from_args, patient_from_json_content, patient_from_text
from .errors import (Abort, CollectionError, ContextTooLong, Fatal, LedgerLocked, StorageFault, Transient,
                     Unreachable)
from .jobs import Job, job_list, jobs_from_table, now_utc, sha256_text, with_samples
from .ledger import LEDGER_NAME, LEDGER_SCHEMA, Ledger, check_ledger, ledger_lock
from .outputs import (RECORD_COLUMNS, atomic_write, check_writable, job_records, output_paths, output_stem,
                      safe_model_dir, sdk_versions, write_outputs)
from .plan import Plan, plan
from .pricing import (CHARS_PER_TOKEN, INPUT_TOKEN_FACTOR, calibrated_input, endpoint_kind, raw_input_estimate, DEFAULT_PRICES, EST_OUTPUT_TOKENS, EST_REASONING_OUTPUT_TOKENS,
                      EST_TOOL_OVERHEAD, PRICES_ENV, TokenModel, cost_of, estimate_tokens, load_prices, price_for,
                      token_cap)
from .redaction import REDACT, Redactor, clean_url
from .retries import RETRY_AFTER_CAP, UNREACHABLE_STREAK, Controller, Outcome, RetryPolicy, ask_with_retries
from .runner import RunResult, Runner, RunSettings, collect, run_jobs
from .replay import compare_with_release, replay_check, replay_targets, simulate_records, simulated_coverage
from .subjects import (ANTHROPIC_SETTINGS, DEFAULT_KEY_ENV, OPENAI_SETTINGS, PAID, PROVIDERS, SIMULATED_PRESETS,
                       AnthropicSubject, OpenAISubject, ReplaySubject, SDKSubject, SimulatedParams,
                       SimulatedSubject, Subject, check_completion, default_timeout, is_loopback, make_subject,
                       read_patients,
                       request_key)
from .subjects import retry_after as _retry_after
from . import commands
from .commands import StopOnSignals, estimate_records

# private names of the first layout that tests and the audit still use
_atomic_write = atomic_write
_job_records = job_records

__all__ = [n for n in dir() if not n.startswith("__")]
