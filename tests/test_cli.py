"""The one command line (analysis.cli): every parser in one module, one table of exit statuses."""
from __future__ import annotations

import argparse
import hashlib
import signal
import subprocess
import sys
import time

import pytest

from analysis import cli, data, paths
from analysis.cells import CellError
from analysis.collection import CollectionError
from analysis.records import NotReleased

CELL = "k12_LH_neutral_learned_zero"
COMMANDS = ["audit", "claims", "collect", "data", "estimate", "pairs", "prompt", "reference", "report"]


def test_every_command_has_its_own_parser_function():
    assert set(COMMANDS) <= set(cli.commands())
    assert {f.__name__ for f in cli.PARSERS} == {f"_parser_{c}" for c in cli.commands()}


@pytest.mark.parametrize("exc,status", [(cli.UsageError("x"), 2), (CellError("x"), 2), (data.InputError("x"), 2),
                                        (NotReleased("x"), 2), (CollectionError("x"), 2), (ValueError("x"), 2),
                                        (FileNotFoundError("x"), 2), (KeyboardInterrupt(), 130),
                                        (cli.Terminated(signal.SIGTERM), 143), (cli.Terminated(signal.SIGHUP), 129)])
def test_error_exit_table(exc, status):
    assert cli.exit_status(exc) == status


def test_a_programming_error_is_not_swallowed():
    assert cli.exit_status(ZeroDivisionError()) is None
    assert cli.exit_status(TypeError()) is None


def test_usage_errors_are_one_line(capsys):
    assert cli.main(["pairs", "--k", "7", "--corner", "LH"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: python -m analysis pairs:") and err.count("\n") == 1
    assert cli.main(["bogus"]) == 2
    assert "unknown command 'bogus'" in capsys.readouterr().err
    assert cli.main([]) == 2 and "Commands" in capsys.readouterr().out
    assert cli.main(["--help"]) == 0


def test_help_of_a_command_exits_0(capsys):
    assert cli.main(["reference", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m analysis reference [-h] --cell CELL [--pairs]")


def test_dispatch_passes_the_namespace(monkeypatch, capsys):
    seen = {}

    def fake(args):
        seen["args"] = args
        return 7

    monkeypatch.setattr(cli, "cmd_pairs", fake)
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sub.choices["pairs"].get_default("func") is fake
    assert cli.main(["pairs", "--k", "12", "--corner", "LH"]) == 7
    assert seen["args"].k == 12 and seen["args"].corner == "LH"


def test_sigterm_ends_with_143_and_one_line(tmp_path):
    """SIGTERM during a long command: exit 143, one line on stderr, no traceback."""
    code = ("import sys, time; from analysis import cli; "
            "cli.cmd_pairs = lambda a: (print('ready', flush=True), time.sleep(30)) and 0; "
            "sys.exit(cli.main(['pairs', '--k', '12', '--corner', 'LH']))")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=paths.ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert err.strip() == "error: terminated by SIGTERM"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "analysis", *args], capture_output=True, text=True, cwd=paths.ROOT)


def test_cli_pairs_and_prompt():
    out = _cli("pairs", "--k", "12", "--corner", "LH")
    assert out.returncode == 0 and out.stdout.splitlines()[:2] == ["pair_id,i,j,stratum", "0,4929,454,0"]
    assert len(out.stdout.splitlines()) == 100
    out = _cli("prompt", "--cell", CELL, "--pair", "0", "--arm", "cf_a1", "--order", "0")
    assert hashlib.sha256(out.stdout.encode()).hexdigest().startswith("8029e10f")


def test_cli_bad_cell_is_one_line_exit_2():
    out = _cli("prompt", "--cell", "k12_LH_nope", "--pair", "0", "--arm", "cf_a1", "--order", "0")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "expected k{6,12,18}" in out.stderr
