# SPDX-License-Identifier: Apache-2.0
"""The `indexsim` command of an installed package (and `python -m indexsim`): every command of the
executable (run, study, sweep, trace, bench, validate, accuracy, merge, --version), and the
analysis commands that live in Python:

  report --db FILE --out DIR [--title T]            Markdown/HTML report with plots
  export --db FILE --format csv|parquet --out DIR   the tables as files (runs wide, the rest long)
  diff A B [--top N]                                metric and kernel deltas of two runs/databases
  sweep SPEC --db FILE --scheduler ADDR             a sweep on a Dask cluster (without --scheduler:
                                                    the executable's local sweep)"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

PYTHON_COMMANDS = {
    "report": "Markdown/HTML report with plots of a results database",
    "export": "a results database's tables as CSV or Parquet files",
    "diff": "metric and per-kernel deltas of two runs or two results databases",
}


def _parser(cmd: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=f"indexsim {cmd}", description=PYTHON_COMMANDS.get(cmd))
    if cmd == "report":
        ap.add_argument("--db", required=True, help="results database (SQLite)")
        ap.add_argument("--out", required=True, help="directory for report.md, report.html and the plots")
        ap.add_argument("--title", help="the report's title (default: the database's name)")
    elif cmd == "export":
        ap.add_argument("--db", required=True, help="results database (SQLite)")
        ap.add_argument("--format", choices=["csv", "parquet"], default="csv", help="file format (default csv)")
        ap.add_argument("--out", required=True, help="directory for runs, metrics, kernels, components, units")
        ap.add_argument("--config", choices=["all", "varying", "none"], default="all",
                        help="config columns of the runs table: every leaf (default), those that vary, none")
    elif cmd == "diff":
        ap.add_argument("a", help="results database, or DB:KEY for one run (a key prefix is enough)")
        ap.add_argument("b", help="the same, for the other side")
        ap.add_argument("--top", type=int, default=10, help="kernels listed per pair (default 10)")
    elif cmd == "sweep":
        ap.add_argument("spec", help="sweep spec YAML")
        ap.add_argument("--db", required=True, help="results database (SQLite)")
        ap.add_argument("--scheduler", required=True, help="Dask scheduler address")
        ap.add_argument("--limit", type=int, help="run at most N pending runs")
        ap.add_argument("--rerun-stale", action="store_true", help="re-run stored runs of another code version")
    return ap


def _forward(argv: List[str]) -> int:
    """Runs the executable with these arguments, in this process's place (exit status and streams
    are the executable's)."""
    from . import _exe
    try:
        exe = _exe.executable()
    except FileNotFoundError as e:
        print(f"indexsim: {e}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    os.execve(exe, [exe] + argv, _exe._environment())
    return 1  # not reached


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv[0] if argv else ""
    if cmd in ("-h", "--help"):
        from . import _exe
        proc = _exe.call(["--help"], check=False)
        sys.stdout.write(proc.stdout)
        print("\nanalysis commands (Python):")
        for name, summary in PYTHON_COMMANDS.items():
            print(f"  {name}\t{summary}")
        print("  sweep --scheduler ADDR\ta sweep on a Dask cluster")
        return 0
    dask_sweep = cmd == "sweep" and any(a == "--scheduler" or a.startswith("--scheduler=") for a in argv)
    if cmd not in PYTHON_COMMANDS and not dask_sweep:
        return _forward(argv)
    a = _parser(cmd).parse_args(argv[1:])
    try:
        if cmd == "report":
            from .report import write
            print(write(a.db, a.out, a.title))
        elif cmd == "export":
            from .export import export
            for table, path in export(a.db, a.out, a.format, a.config).items():
                print(f"{table:10s} {path}")
        elif cmd == "diff":
            from .diff import RunRef, text
            sys.stdout.write(text(RunRef.parse(a.a), RunRef.parse(a.b), a.top))
        else:
            from .sweep import sweep
            res = sweep(a.spec, a.db, cluster=a.scheduler, limit=a.limit, rerun_stale=a.rerun_stale)
            print(f"{res.total} runs: {res.ok} ok, {res.failed} failed, {res.pending} pending")
            return 3 if res.failed else 0
    except (OSError, ValueError, ImportError) as e:   # OSError: FileNotFoundError, FileExistsError, PermissionError
        print(f"indexsim {cmd}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
