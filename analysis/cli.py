"""Command line: ``python -m analysis <command> ...``.

Commands (``python -m analysis <command> --help`` for each):

  data        fetch and verify every input by name and SHA-256
  pairs       print the evaluation pairs of a configuration as CSV
  prompt      print the exact prompt of one job
  collect     collect per-call records (replay, anthropic, openai, simulated)
  estimate    PSE, error and references of a records file
  reference   the full-information reference and the reference learner of a cell
  claims      recompute every claim and write data/derived/claims_check.csv
  report      render the HTML claims report
  audit       run the audit on your own model and write a report card
  compare     one comparison card of several audits and the paper's four models

Errors print one line on stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys

import pandas as pd

from . import audit as A
from . import claims as claims_mod
from . import collection as C
from . import config, data, population, prompts, references, report as report_mod
from .audit import commands as audit_commands
from .audit import compare as compare_mod
from .cells import CellError, parse_cell
from .collection import commands as collection_commands
from .inspect_bridge import commands as inspect_commands  # collect --import-inspect, audit --from-inspect (issue 24)
from .jsonable import jsonable
from .records import NotReleased

PROG = "python -m analysis"


class UsageError(Exception):
    """A bad command line; printed as one line, exit status 2."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (raised by the handlers :func:`main` installs); exit 128 + signal."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


#: exception type -> exit status; the most specific type in an exception's MRO decides
#: (usage, bad input, CellError, locked ledger, storage fault -> 2; unreachable endpoint -> 3)
ERROR_EXIT: dict[type, int] = {
    UsageError: 2,
    CellError: 2,
    data.InputError: 2,
    NotReleased: 2,
    C.CollectionError: 2,  # also the ledger lock (C.LedgerLocked) and storage faults (C.StorageFault)
    C.Unreachable: 3,  # the endpoint failed on the last 20 attempts (connection errors): resumable
    ValueError: 2,
    LookupError: 2,
    OSError: 2,
    RuntimeError: 2,
    KeyboardInterrupt: 130,
}
#: exit status of a run ended by a signal
SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def exit_status(exc: BaseException) -> int | None:
    """The exit status :data:`ERROR_EXIT` gives ``exc`` (None: not a user error, let it raise)."""
    if isinstance(exc, Terminated):
        return SIGNAL_EXIT.get(exc.signum, 128 + exc.signum)
    for t in type(exc).__mro__:
        if t in ERROR_EXIT:
            return ERROR_EXIT[t]
    return None


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit 2) instead of usage + exit."""

    def error(self, message):  # noqa: D401
        raise UsageError(f"{self.prog}: {message}")


# =============================================================================================
# Parsers, one function per command
# =============================================================================================
def _parser_data(sub) -> None:
    ap = sub.add_parser("data", prog=f"{PROG} data", description="Fetch and verify every input.")
    ap.add_argument("names", nargs="*", help="registry names (default: all)")
    ap.add_argument("--quiet", action="store_true")
    ap.set_defaults(func=cmd_data)


def _parser_pairs(sub) -> None:
    ap = sub.add_parser("pairs", prog=f"{PROG} pairs",
                        description="Evaluation pairs (CSV: pair_id,i,j,stratum; i is the target).")
    ap.add_argument("--k", type=int, required=True, choices=sorted(config.FIELD_COUNTS))
    ap.add_argument("--corner", required=True, choices=config.CORNERS)
    ap.add_argument("--seed", type=int, default=None, help="replication seed S (population S, pairs S + 20000)")
    ap.set_defaults(func=cmd_pairs)


def _parser_prompt(sub) -> None:
    ap = sub.add_parser("prompt", prog=f"{PROG} prompt", description="Print the exact prompt of one job.")
    ap.add_argument("--cell", required=True)
    ap.add_argument("--pair", type=int, required=True)
    ap.add_argument("--arm", required=True, choices=config.ARMS)
    ap.add_argument("--order", type=int, required=True, choices=config.ORDERS)
    ap.add_argument("--display", default="numeric", choices=config.DISPLAYS)
    ap.set_defaults(func=cmd_prompt)


def _parser_collect(sub) -> None:
    policy = C.RetryPolicy
    ap = sub.add_parser("collect", prog=f"{PROG} collect",
                        description="Collect per-call records of one or more cells (resumable; never pays twice). "
                                    "One writer per ledger: a second collect/audit on the same ledger is refused "
                                    "with the pid of the run holding it (exit 2). The first Ctrl-C, SIGTERM or "
                                    "SIGHUP finishes the requests in flight and writes the records (exit 130/143/"
                                    "129); a second one aborts at once. An endpoint that fails 20 attempts in a "
                                    "row on connection errors stops the run (exit 3, resumable).")
    ap.add_argument("--cell", nargs="+", help="cell id(s), e.g. k12_LH_neutral_learned_zero (required unless "
                                              "--import-inspect)")
    ap.add_argument("--provider", help="replay | anthropic | openai | simulated")
    ap.add_argument("--model",
                    help="replay: sonnet/deepseek/qwen/gpt; simulated: " + "/".join(C.SIMULATED_PRESETS)
                    + "; otherwise the serving model id")
    ap.add_argument("--display", default="numeric", help="numeric | ordered | arbitrary")
    ap.add_argument("--base-url", help="endpoint (OpenRouter, vLLM, Ollama, a fake server)")
    ap.add_argument("--out", required=True, help="output folder (records, metadata, ledger)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-cost", type=float, help="stop cleanly at this budget (USD, this invocation)")
    ap.add_argument("--dry-run", action="store_true", help="print calls, tokens and cost; call nothing")
    ap.add_argument("--reuse-identical-prompts", action="store_true",
                    help="one response per distinct prompt (real-record rule); default: one per job")
    ap.add_argument("--reask", type=int, default=1,
                    help="answers per job when invalid (paper's optional rule: 5); default 1 = never re-ask")
    ap.add_argument("--retries", type=int, default=policy.max_attempts, help="transport attempts per answer")
    ap.add_argument("--backoff", type=float, default=policy.base, help="first backoff (s), doubled each retry")
    ap.add_argument("--backoff-cap", type=float, default=policy.cap)
    ap.add_argument("--timeout", type=float, default=None,
                    help=f"total seconds per request (connect + the whole reply); default "
                         f"{config.REQUEST_TIMEOUT_S:g}, {config.LOCAL_REQUEST_TIMEOUT_S:g} for a --base-url on this machine")
    ap.add_argument("--retry-after-cap", type=float, default=policy.retry_after_cap,
                    help=f"longest wait (s) a server's retry-after is honoured for; a longer one is capped and "
                         f"reported (default {policy.retry_after_cap:g})")
    ap.add_argument("--answer-format", default="tool", choices=C.ANSWER_FORMATS,
                    help="tool: the forced choose tool (the protocol, default); json or text: the answer in the "
                         "content, for servers that refuse a forced tool_choice (part of the request key); logprobs: "
                         "the single token 1 or 2 with its log-probabilities (OpenAI-compatible servers; a deviation); "
                         "completion: a base model scored on the tokens 1 and 2 after a completion prompt (POST "
                         "/v1/completions, like lm-evaluation-harness multiple choice; --provider openai, no --batch; "
                         "a deviation)")
    ap.add_argument("--samples", type=int, default=config.SAMPLES_DEFAULT, metavar="R",
                    help="independent answers per prompt (default 1, the protocol); each is its own ledger row, a "
                         "resumed run asks only for the missing ones; the dry run prices all R")
    ap.add_argument("--pairs", type=int, help="only the first N pairs of each cell (a subset, not the protocol)")
    ap.add_argument("--settings", help="JSON merged into the request settings (null removes a setting; header "
                                       "values are redacted from every output)")
    ap.add_argument("--prices",
                    help=f"price table override (CSV or JSON; default ${C.PRICES_ENV} then data/prices.csv)")
    ap.add_argument("--price-in", type=float, help="USD per million input tokens (with --price-out; 0 for a local model)")
    ap.add_argument("--price-out", type=float, help="USD per million output tokens (with --price-in)")
    ap.add_argument("--api-key-env", help="environment variable holding the API key")
    ap.add_argument("--ledger", help=f"ledger file (default OUT/{C.LEDGER_NAME})")
    ap.add_argument("--sim-seed", type=int, default=0, help="seed of the simulated subject's noise")
    ap.add_argument("--run", help="replay: GPT repeated-measurement run (a or b)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars (for logs and CI)")
    _batch_arguments(ap)
    _preflight_argument(ap)
    ap.add_argument("--export-batch", metavar="FILE",
                    help="write the pending requests as OpenAI-batch JSONL (for vllm run-batch or any engine); "
                         "call nothing")
    ap.add_argument("--import-batch", metavar="FILE",
                    help="read an OpenAI Batch / vllm run-batch results JSONL into the ledger, then write records")
    ap.add_argument("--import-inspect", nargs="+", metavar="LOG",
                    help="read inspect_ai logs of `inspect eval analysis/proxy_audit` into the ledger (request key: "
                         "the request inspect sent), then write records; needs the [inspect] extra")
    ap.set_defaults(func=cmd_collect)


def _batch_arguments(ap) -> None:
    """``--batch``, ``--poll-interval``, ``--batch-max-requests``, ``--prompt-cache`` (collect and audit; issue 14)."""
    ap.add_argument("--batch", action="store_true",
                    help="send every pending job through the provider's batch API (Anthropic Message Batches, "
                         "OpenAI Batch) at the batch price; resumable: rerun the same command to poll, never resend")
    ap.add_argument("--poll-interval", type=float, default=60.0, metavar="S",
                    help="seconds between polls of the live batches (default 60)")
    ap.add_argument("--batch-max-requests", type=int, metavar="N",
                    help="requests per batch at most (default the provider's cap: 100,000 Anthropic, 50,000 OpenAI)")
    ap.add_argument("--prompt-cache", action="store_true",
                    help="Anthropic: cache_control on the shared example block (off by default; a deviation from "
                         "the paper's request, with its own request key; the card says so)")


def _preflight_argument(ap) -> None:
    """``--no-preflight`` (collect and audit; issue 20)."""
    ap.add_argument("--no-preflight", action="store_true",
                    help="skip the preflight request (GET the model from the models route) before the first paid "
                         "request, for a gateway without that route; a 404 that is not a model error only warns")


def _parser_estimate(sub) -> None:
    ap = sub.add_parser("estimate", prog=f"{PROG} estimate",
                        description="PSE, error and interval of a records file (JSON on stdout).")
    ap.add_argument("--cell", required=True)
    ap.add_argument("--records", required=True, help="a records CSV (released schema)")
    ap.add_argument("--display", default="numeric", choices=config.DISPLAYS,
                    help="display of the records (ordered/arbitrary use the category-indicator learner)")
    ap.set_defaults(func=cmd_estimate)


def _parser_reference(sub) -> None:
    ap = sub.add_parser("reference", prog=f"{PROG} reference",
                        description="Full-information reference and reference learner of a cell (JSON; pp "
                                    "unrounded). learner_* are null in cells without examples.")
    ap.add_argument("--cell", required=True, help="cell id, e.g. k12_LH_neutral_learned_info_b030_s20001")
    ap.add_argument("--pairs", action="store_true", help="print per-pair decisions as CSV instead")
    ap.set_defaults(func=cmd_reference)


def _parser_claims(sub) -> None:
    ap = sub.add_parser("claims", prog=f"{PROG} claims",
                        description="Recompute every claim; write data/derived/claims_check.csv.")
    ap.add_argument("--table", nargs="+", help="print only these tables' rows (e.g. 'Table 6' 'SN 4' 'Main')")
    ap.set_defaults(func=cmd_claims)


def _parser_report(sub) -> None:
    ap = sub.add_parser("report", prog=f"{PROG} report", description=report_mod.__doc__.splitlines()[0])
    ap.add_argument("--check", default=str(report_mod.paths.CLAIMS_CHECK), help="claims_check.csv to render")
    ap.add_argument("--out", default=str(report_mod.REPORT))
    ap.set_defaults(func=cmd_report)


def _parser_audit(sub) -> None:
    ap = sub.add_parser("audit", prog=f"{PROG} audit",
                        description="Audit a model against the evidence: plan, collect (resumable, never pays "
                                    "twice), estimate and write a report card (report_card.html + "
                                    "report_card.json in --out).")
    ap.add_argument("--provider", help="anthropic | openai (any OpenAI-compatible endpoint) | simulated")
    ap.add_argument("--model", help="the serving model id; with simulated, a preset ("
                    + ", ".join(A.AUDIT_PRESETS) + ") or any label with --preset")
    ap.add_argument("--base-url", help="endpoint (OpenRouter, vLLM, Ollama, a proxy); default: the provider's")
    ap.add_argument("--battery", default="core", choices=A.BATTERY_NAMES,
                    help="core (6,732 calls), full (adds field count and dependence; 9,108 calls) or smoke (one "
                         f"no-example and one 80-example cell on the first {A.SMOKE_PAIRS} pairs: a check, not the "
                         "protocol) or validity (cue panel and association probe, beyond the paper's protocol: "
                         "every cue and both probe variants, its cost printed first)")
    ap.add_argument("--pairs", type=int, metavar="N",
                    help=f"only the first N pairs of every condition (smoke default {A.SMOKE_PAIRS}); the card says so")
    ap.add_argument("--price-in", type=float, metavar="USD",
                    help="input price per million tokens, overriding the price table (0 for a local model)")
    ap.add_argument("--price-out", type=float, metavar="USD",
                    help="output price per million tokens (give both; 0 0 for a local model)")
    ap.add_argument("--answer-format", default="tool", choices=C.ANSWER_FORMATS,
                    help="tool: a forced tool call (the protocol); json or text: the answer in the message content, "
                         "for servers that refuse a forced tool_choice (part of the request key and the card); "
                         "logprobs: the single token 1 or 2 with its log-probabilities (a deviation, on the card); "
                         "completion: a base model without a chat template scored on the tokens 1 and 2 after a "
                         "completion prompt (POST /v1/completions, like lm-evaluation-harness multiple choice; "
                         "--provider openai, no --batch; a deviation, on the card)")
    ap.add_argument("--samples", type=int, default=config.SAMPLES_DEFAULT, metavar="R",
                    help="independent answers per prompt (default 1); PSE on per-prompt choice probabilities "
                         "(Supplementary Note 12's rule), the card reports within-prompt agreement")
    ap.add_argument("--max-cost", type=float,
                    help="budget in USD for this output folder, including what earlier runs into it spent; the "
                         "audit stops cleanly at the budget and resumes when rerun with a larger one")
    ap.add_argument("--dry-run", action="store_true", help="print calls, tokens and cost; call nothing, write nothing")
    ap.add_argument("--concurrency", type=int, help="parallel requests (default 8; 1 for the simulated subject)")
    ap.add_argument("--out", required=True, help="output folder: ledger, records, report card")
    ap.add_argument("--preset", help="simulated behaviour: " + ", ".join(A.AUDIT_PRESETS))
    ap.add_argument("--seed", type=int, default=0, help="seed of the simulated subject's noise")
    ap.add_argument("--draws", type=int, default=config.BOOTSTRAP_DRAWS, help="bootstrap draws (paper: 5,000)")
    ap.add_argument("--prices", help="price table override (CSV or JSON; default data/prices.csv)")
    ap.add_argument("--api-key-env", help="environment variable holding the API key")
    ap.add_argument("--settings", help="JSON merged into the request settings (null removes a setting)")
    ap.add_argument("--timeout", type=float, default=None,
                    help=f"seconds per request; default {config.REQUEST_TIMEOUT_S:g}, "
                         f"{config.LOCAL_REQUEST_TIMEOUT_S:g} for a --base-url on this machine (a local model's first long prompt)")
    ap.add_argument("--retries", type=int, default=C.RetryPolicy.max_attempts, help="transport attempts per answer")
    ap.add_argument("--only", nargs="+", metavar="CONDITION", help="run only these conditions of the battery")
    ap.add_argument("--no-reference-models", action="store_true", help="leave out the paper's four models")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars (for logs and CI)")
    _batch_arguments(ap)
    _preflight_argument(ap)
    ap.add_argument("--from-inspect", nargs="+", metavar="LOG",
                    help="import inspect_ai logs of `inspect eval analysis/proxy_audit` and write the card, with "
                         "every difference of inspect's request from the protocol's as deviations ([inspect] extra)")
    ap.set_defaults(func=cmd_audit)


def _parser_compare(sub) -> None:
    ap = sub.add_parser("compare", prog=f"{PROG} compare",
                        description="One comparison card (comparison_card.html + .json) of several audits and the "
                                    "paper's four models: one row per model and condition, PSE minus reference "
                                    "across models, tracking slopes side by side; no ranking.")
    ap.add_argument("outs", nargs="+", metavar="OUT", help="audit output folders (each with report_card.json)")
    ap.add_argument("--out", required=True, help="folder for the comparison card")
    ap.add_argument("--draws", type=int, help="bootstrap draws of the reference rows (default: the cards')")
    ap.add_argument("--no-reference-models", action="store_true", help="leave out the paper's four models")
    ap.set_defaults(func=cmd_compare)


#: every command's parser, in the order ``--help`` lists them
PARSERS = (_parser_data, _parser_pairs, _parser_prompt, _parser_collect, _parser_estimate, _parser_reference,
           _parser_claims, _parser_report, _parser_audit, _parser_compare)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: one subparser per command."""
    ap = _Parser(prog=PROG, description=__doc__.splitlines()[0], add_help=False)
    sub = ap.add_subparsers(dest="command", parser_class=_Parser)
    for add in PARSERS:
        add(sub)
    return ap


def commands() -> list[str]:
    """The command names."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


# =============================================================================================
# The core commands (the areas' commands live in their packages)
# =============================================================================================
def cmd_data(args: argparse.Namespace) -> int:
    """``data``: fetch and verify the inputs."""
    got = data.fetch_all(args.names or None, progress=not args.quiet)
    print(f"{len(got)} inputs verified in {data.paths.cache_dir()}")
    return 0


def cmd_pairs(args: argparse.Namespace) -> int:
    """``pairs``: the evaluation pairs of a configuration as CSV."""
    cell = f"k{args.k}_{args.corner}_neutral_absent_zero" + (f"_s{args.seed}" if args.seed is not None else "")
    population.pairs(parse_cell(cell)).to_csv(sys.stdout, index=False, lineterminator="\n")
    return 0


def cmd_prompt(args: argparse.Namespace) -> int:
    """``prompt``: the exact prompt of one job."""
    sys.stdout.write(prompts.render(parse_cell(args.cell), args.pair, args.arm, args.order, args.display))
    return 0


def cmd_reference(args: argparse.Namespace) -> int:
    """``reference``: both references of a cell as JSON (or the per-pair decisions as CSV)."""
    cell = parse_cell(args.cell)
    if args.pairs:
        references.reference_pairs(cell).to_csv(sys.stdout, index=False, lineterminator="\n")
        return 0
    print(json.dumps(jsonable(references.cell_references(cell)), indent=2))
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    """``claims``: recompute every claim and write the claims check; ``--table``: print those tables' rows.

    ``--table`` reads ``claims_check.csv`` when it is current (same sources and registries) and
    otherwise recomputes only the studies behind the tables asked for, writing nothing.
    """
    columns = ["claim_id", "paper_value", "reproduced_value", "tolerance", "status"]
    if args.table:
        view, recomputed = claims_mod.check_tables(args.table)
        with pd.option_context("display.width", 200, "display.max_colwidth", 90):
            print(view[columns].to_string(index=False))
            notes = view[(view["status"] != "match") & (view["note"] != "")]
            for row in notes.itertuples(index=False):
                print(f"{row.claim_id} ({row.status}): {row.note}")
        source = "recomputed" if recomputed else "from the current data/derived/claims_check.csv"
        print(" ".join(f"{k}={v}" for k, v in claims_mod.summary(view).items()) + f" total={len(view)} ({source})")
        return 0
    df = claims_mod.check()
    bad = df[df["status"] != "match"]
    if len(bad):
        with pd.option_context("display.width", 200):
            print(bad[columns].to_string(index=False))
    print(" ".join(f"{k}={v}" for k, v in claims_mod.summary(df).items()) + f" total={len(df)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """``report``: render the HTML claims report (and the README's reviewer index)."""
    return report_mod.write(args.check, args.out)


def _require(args: argparse.Namespace, command: str, names: tuple[str, ...]) -> None:
    """The options a command needs unless it imports inspect logs (issue 24)."""
    missing = [f"--{n.replace('_', '-')}" for n in names if getattr(args, n, None) in (None, [])]
    if missing:
        raise UsageError(f"{PROG} {command}: the following arguments are required: {', '.join(missing)}")


def cmd_collect(args: argparse.Namespace) -> int:
    """``collect``: :func:`analysis.collection.commands.collect` (``--import-inspect``: inspect logs)."""
    if args.import_inspect:
        return inspect_commands.collect_import(args)
    _require(args, "collect", ("cell", "provider", "model"))
    return collection_commands.collect(args)


def cmd_estimate(args: argparse.Namespace) -> int:
    """``estimate``: :func:`analysis.collection.commands.estimate`."""
    return collection_commands.estimate(args)


def cmd_audit(args: argparse.Namespace) -> int:
    """``audit``: :func:`analysis.audit.commands.audit` (``--from-inspect``: the card of inspect logs)."""
    if args.from_inspect:
        return inspect_commands.audit_from_inspect(args)
    _require(args, "audit", ("provider", "model"))
    return audit_commands.audit(args)


def cmd_compare(args: argparse.Namespace) -> int:
    """``compare``: :func:`analysis.audit.compare.command`."""
    return compare_mod.command(args)


# =============================================================================================
# Entry point
# =============================================================================================
def _fail(msg: str) -> None:
    print(f"error: {C.REDACT(msg)}", file=sys.stderr)


def _on_signal(signum, frame):
    raise Terminated(signum)


def _install_signal_handlers() -> None:
    """SIGTERM and SIGHUP end the command through :class:`Terminated` (exit 143 / 129), unless an
    area's command installs its own handler."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # not the main thread
            pass


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit status (user errors: one line on stderr, never a traceback)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    try:
        ap = build_parser()
        names = commands()
        if argv[0] not in names:
            raise UsageError(f"unknown command {argv[0]!r}; expected one of {', '.join(names)}")
        args = ap.parse_args(argv)
        args.argv = argv[1:]
        if "timeout" in args and args.timeout is None:  # a local server gets minutes for its first long prompt
            args.timeout = C.default_timeout(getattr(args, "base_url", None))
        _install_signal_handlers()
        return args.func(args)
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return 0
    except SystemExit as exc:  # --help has printed its text
        return 2 if exc.code not in (0, None) else 0
    except BaseException as exc:  # noqa: BLE001 (mapped through ERROR_EXIT; anything else re-raises)
        status = exit_status(exc)
        if status is None:
            raise
        msg = str(exc).strip("'\"")
        if isinstance(exc, KeyboardInterrupt):
            msg = "interrupted"
        elif isinstance(exc, Terminated):
            msg = f"terminated by {exc}"
        _fail(msg)
        return status
