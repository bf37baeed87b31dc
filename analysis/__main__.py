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

Errors print one line on stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import config
from .cells import CellError, parse_cell

#: command -> (module, function) for commands implemented with their stage
DELEGATED = {
    "collect": ("analysis.collection", "cli_collect"),
    "estimate": ("analysis.collection", "cli_estimate"),
    "reference": ("analysis.references", "cli_reference"),
    "audit": ("analysis.audit", "cli_audit"),
    "report": ("analysis.report", "cli_report"),
}


class UsageError(Exception):
    """A bad command line; printed as one line, exit status 2."""


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def cmd_data(argv: list[str]) -> int:
    from . import data

    ap = argparse.ArgumentParser(prog="python -m analysis data", description="Fetch and verify every input.")
    ap.add_argument("names", nargs="*", help="registry names (default: all)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    got = data.fetch_all(a.names or None, progress=not a.quiet)
    print(f"{len(got)} inputs verified in {data.paths.cache_dir()}")
    return 0


def cmd_pairs(argv: list[str]) -> int:
    from . import population

    ap = argparse.ArgumentParser(prog="python -m analysis pairs",
                                 description="Evaluation pairs (CSV: pair_id,i,j,stratum; i is the target).")
    ap.add_argument("--k", type=int, required=True, choices=sorted(config.FIELD_COUNTS))
    ap.add_argument("--corner", required=True, choices=config.CORNERS)
    ap.add_argument("--seed", type=int, default=None, help="replication seed S (population S, pairs S + 20000)")
    a = ap.parse_args(argv)
    cell = f"k{a.k}_{a.corner}_neutral_absent_zero" + (f"_s{a.seed}" if a.seed is not None else "")
    population.pairs(parse_cell(cell)).to_csv(sys.stdout, index=False, lineterminator="\n")
    return 0


def cmd_prompt(argv: list[str]) -> int:
    from . import prompts

    ap = argparse.ArgumentParser(prog="python -m analysis prompt", description="Print the exact prompt of one job.")
    ap.add_argument("--cell", required=True)
    ap.add_argument("--pair", type=int, required=True)
    ap.add_argument("--arm", required=True, choices=config.ARMS)
    ap.add_argument("--order", type=int, required=True, choices=config.ORDERS)
    ap.add_argument("--display", default="numeric", choices=config.DISPLAYS)
    a = ap.parse_args(argv)
    sys.stdout.write(prompts.render(parse_cell(a.cell), a.pair, a.arm, a.order, a.display))
    return 0


def cmd_claims(argv: list[str]) -> int:
    from . import claims

    ap = argparse.ArgumentParser(prog="python -m analysis claims",
                                 description="Recompute every claim; write data/derived/claims_check.csv.")
    ap.add_argument("--table", nargs="+", help="print only these tables' rows (e.g. 'Table 6' 'SN 4' 'Main')")
    a = ap.parse_args(argv)
    df = claims.check()
    counts = claims.summary(df)
    view = df if not a.table else df[df["table"].isin(a.table)]
    bad = view[view["status"] != "match"]
    if a.table:
        print(view[["claim_id", "paper_value", "reproduced_value", "status"]].to_string(index=False))
    elif len(bad):
        print(bad[["claim_id", "paper_value", "reproduced_value", "status"]].to_string(index=False))
    print(" ".join(f"{k}={v}" for k, v in counts.items()) + f" total={len(df)}")
    return 0


LOCAL = {"data": cmd_data, "pairs": cmd_pairs, "prompt": cmd_prompt, "claims": cmd_claims}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = sorted(set(LOCAL) | set(DELEGATED))
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    try:
        if cmd in LOCAL:
            return LOCAL[cmd](rest)
        if cmd in DELEGATED:
            mod, fn = DELEGATED[cmd]
            return getattr(importlib.import_module(mod), fn)(rest)
        return _fail(f"unknown command {cmd!r}; expected one of {', '.join(commands)}")
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return 0
    except SystemExit as exc:  # argparse has printed its usage line
        return 2 if exc.code not in (0, None) else 0
    except (CellError, ValueError, LookupError, OSError, RuntimeError) as exc:
        return _fail(str(exc).strip("'\""))


if __name__ == "__main__":
    sys.exit(main())
