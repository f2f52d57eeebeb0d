# SPDX-License-Identifier: Apache-2.0
"""python -m indexsim report --db FILE --out DIR | sweep SPEC --db FILE [--workers N]"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m indexsim")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report", help="Markdown/HTML report with plots of a results database")
    r.add_argument("--db", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--title")
    s = sub.add_parser("sweep", help="run a sweep spec into a database (locally, or on Dask with --scheduler)")
    s.add_argument("spec")
    s.add_argument("--db", required=True)
    s.add_argument("--workers", type=int)
    s.add_argument("--scheduler", help="Dask scheduler address")
    a = ap.parse_args(argv)
    if a.cmd == "report":
        from .report import write
        print(write(a.db, a.out, a.title))
    else:
        from .sweep import sweep
        res = sweep(a.spec, a.db, workers=a.workers, cluster=a.scheduler)
        print(f"{res.total} runs: {res.ok} ok, {res.failed} failed, {res.pending} pending")
        return 1 if res.failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
