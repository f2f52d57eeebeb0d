# SPDX-License-Identifier: Apache-2.0
"""`indexsim.sweep`: a sweep on the local process pool (`indexsim sweep`) or on a Dask cluster.

On Dask every run is one task that runs `indexsim sweep SPEC --select I` into the database shard of
the worker it lands on (`<db>.shards/<worker>.sqlite`); when all are done the shards are merged
into `db` with `indexsim merge`, which skips runs already there, so nothing is stored twice."""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _exe

SOME_RUNS_FAILED = 3  # `indexsim sweep` exit status: completed, some runs stored as failed
Spec = Union[str, os.PathLike, Mapping[str, Any]]


@dataclass
class SweepSummary:
    total: int
    ok: int
    failed: int
    pending: int
    keys: List[str]


def _spec_file(spec: Spec, tmpdir: str) -> str:
    if isinstance(spec, Mapping):
        import yaml
        path = os.path.join(tmpdir, "spec.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(json.loads(json.dumps(spec)), f, sort_keys=False)
        return path
    return os.path.abspath(os.fspath(spec))


def plan(spec: Spec, db: Optional[str] = None, rerun_stale: bool = False) -> List[Dict[str, Any]]:
    """The runs of a spec (index, key, point, args, done, stale: stored by another code version)
    without running anything; a stale run is done unless rerun_stale."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["sweep", _spec_file(spec, tmp), "--dry-run", "--json"]
        if db:
            args += ["--db", os.path.abspath(db)]
        if rerun_stale:
            args.append("--rerun-stale")
        return json.loads(_exe.call(args).stdout)["runs"]


def _summary(runs: List[Dict[str, Any]], db: str) -> SweepSummary:
    import sqlite3
    from contextlib import closing
    keys = [r["key"] for r in runs]
    status: Dict[str, str] = {}
    if os.path.exists(db):
        with closing(sqlite3.connect(db)) as con:
            status = dict(con.execute("SELECT key, status FROM runs").fetchall())
    ok = sum(status.get(k) == "ok" for k in keys)
    failed = sum(status.get(k) == "failed" for k in keys)
    return SweepSummary(total=len(keys), ok=ok, failed=failed, pending=len(keys) - ok - failed, keys=keys)


def sweep(spec: Spec, db: str, workers: Optional[int] = None, cluster: Any = None, limit: Optional[int] = None,
          quiet: bool = False, rerun_stale: bool = False) -> SweepSummary:
    """Runs every point of `spec` (a YAML path or the same structure as a dict) not yet stored in `db`
    (stored by another code version counts as stored unless rerun_stale).

    cluster: None for the local process pool (`workers` processes), or a dask.distributed Client,
    a cluster object (LocalCluster, dask_jobqueue.SLURMCluster, ...) or a scheduler address."""
    db = os.path.abspath(db)
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = _spec_file(spec, tmp)
        if cluster is None:
            args = ["sweep", spec_path, "--db", db]
            if workers:
                args += ["--workers", str(workers)]
            if limit:
                args += ["--limit", str(limit)]
            if quiet:
                args.append("--quiet")
            if rerun_stale:
                args.append("--rerun-stale")
            # Exit status 3: some runs failed; they are stored with their error, as on Dask.
            proc = _exe.call(args, capture=False, check=False, stderr=None)
            if proc.returncode not in (0, SOME_RUNS_FAILED):
                raise _exe.SimulationError(f"indexsim sweep failed with status {proc.returncode}", proc.returncode, "sweep")
            return _summary(plan(spec_path), db)
        return _dask_sweep(spec_path, db, cluster, limit, rerun_stale)


def _worker_shard(shard_dir: str) -> str:
    try:
        from distributed import get_worker
        name = str(get_worker().name)
    except (ImportError, ValueError):
        name = "local"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return os.path.join(shard_dir, f"{name}-{os.getpid()}.sqlite")


def _dask_task(index: int, spec_text: str, shard_dir: str) -> int:
    """One run on a Dask worker, into that worker's shard (the spec travels as text, so workers need
    no shared copy of it; the shard directory must be reachable from the client for the merge)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spec.yaml")
        with open(path, "w") as f:
            f.write(spec_text)
        proc = _exe.call(["sweep", path, "--db", _worker_shard(shard_dir), "--select", str(index), "--workers", "1",
                          "--quiet"], check=False)
        if proc.returncode not in (0, SOME_RUNS_FAILED):
            raise _exe._error("sweep", proc.returncode, proc.stderr)
        return proc.returncode


def _client(cluster: Any):
    from distributed import Client
    if isinstance(cluster, Client):
        return cluster, False
    return Client(cluster), True


def _merge_shards(db: str, shard_dir: str) -> None:
    shards = sorted(str(p) for p in Path(shard_dir).glob("*.sqlite"))
    merge(db, shards)
    for p in Path(shard_dir).glob("*.sqlite*"):
        p.unlink()
    try:
        os.rmdir(shard_dir)
    except OSError:
        pass


def _dask_sweep(spec_path: str, db: str, cluster: Any, limit: Optional[int], rerun_stale: bool = False) -> SweepSummary:
    shard_dir = db + ".shards"
    if os.path.isdir(shard_dir):  # left by an interrupted client: their runs count as done
        _merge_shards(db, shard_dir)
    runs = plan(spec_path, db, rerun_stale)
    pending = [r["index"] for r in runs if not r["done"]]
    if limit:
        pending = pending[:limit]
    spec_text = Path(spec_path).read_text()
    os.makedirs(shard_dir, exist_ok=True)
    client, owned = _client(cluster)
    try:
        futures = client.map(_dask_task, pending, spec_text=spec_text, shard_dir=shard_dir, pure=False)
        from distributed import as_completed
        # tqdm: rate and ETA, one line rewritten on a terminal; in a log (not a terminal) a line at
        # most every 10 s, so the lines do not run together.
        from tqdm import tqdm
        tty = sys.stderr.isatty()
        with tqdm(total=len(pending), desc="[sweep dask]", unit="run", file=sys.stderr, disable=not pending,
                  mininterval=0.1 if tty else 10, ncols=None if tty else 100, ascii=not tty) as bar:
            for fut in as_completed(futures):
                fut.result()
                bar.update(1)
    finally:
        if owned:
            client.close()
    _merge_shards(db, shard_dir)
    return _summary(runs, db)


def merge(db: str, shards: List[str]) -> None:
    """Copies the runs of `shards` that `db` lacks into `db` (`indexsim merge`)."""
    if shards:
        _exe.call(["merge", os.path.abspath(db)] + [os.path.abspath(s) for s in shards])
