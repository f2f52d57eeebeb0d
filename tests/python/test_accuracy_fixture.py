# SPDX-License-Identifier: Apache-2.0
"""The real-vector fixture and `indexsim accuracy`, checked from an independent numpy implementation."""
import importlib.util
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "vectors"


def load():
    keys = np.load(FIXTURE / "keys.npy")
    queries = np.load(FIXTURE / "queries.npy")
    pos = np.load(FIXTURE / "query_pos.npy")
    meta = json.loads((FIXTURE / "meta.json").read_text())
    return keys, queries, pos, meta


def indexsim_binary():
    build = Path(os.environ.get("INDEXSIM_BUILD_DIR", "build"))
    if not build.is_absolute():
        build = ROOT / build
    exe = build / "sim" / "indexsim"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    return exe


def test_fixture_matches_its_note_and_meta():
    keys, queries, pos, meta = load()
    assert keys.dtype == np.float16 and queries.dtype == np.float16 and pos.dtype == np.int32
    assert keys.shape == (meta["layers"], meta["tokens"], len(meta["heads_kept"]) * meta["head_dim"]) == (6, 4096, 128)
    assert queries.shape == (6, 64, 128)
    # queries at 32, 96, ..., 4064: evenly spread, off the window edges
    assert list(pos) == list(range(32, 4096, 64))
    assert np.isfinite(keys).all() and np.isfinite(queries).all()


def test_real_neighbouring_keys_are_alike_and_heads_are_not():
    """What pooling along tokens relies on, and why pooling along vectors loses: measured, not assumed."""
    keys = load()[0].astype(np.float32)
    for layer in keys:
        n = layer / np.linalg.norm(layer, axis=1, keepdims=True)
        neighbours = (n[1:] * n[:-1]).sum(1).mean()
        h = layer.reshape(-1, 4, 32)
        h = h / np.linalg.norm(h, axis=2, keepdims=True)
        across_heads = np.mean([(h[:, i] * h[:, j]).sum(1).mean() for i in range(4) for j in range(i + 1, 4)])
        assert neighbours > across_heads + 0.2


def test_script_gelu_is_the_exact_erf_form():
    spec = importlib.util.spec_from_file_location("mk", ROOT / "scripts" / "make_vectors_fixture.py")
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    # GELU(x) = x Φ(x): Φ(1) = 0.841344746..., Φ(-1) = 0.158655254...
    got = mk.gelu(np.array([0.0, 1.0, -1.0, 10.0]))
    np.testing.assert_allclose(got, [0.0, 0.8413447, -0.1586553, 10.0], rtol=1e-6, atol=1e-7)


def test_accuracy_command_agrees_with_numpy():
    """PCA dims, 2:1 token-pooling key cosine and recall@64, recomputed here from the definitions."""
    out = subprocess.run([str(indexsim_binary()), "accuracy", "--json", "--queries", "4", "--k", "64",
                          "--fixture", str(FIXTURE)], check=True, capture_output=True, text=True).stdout
    rows = {(r["technique"], r["params"]): r for r in json.loads(out)["results"]}
    keys, queries, _, _ = load()
    keys = keys.astype(np.float64)
    qsel = [int(i * 64 / 4) for i in range(4)]   # the evenly spaced subset --queries 4 takes

    for share in (0.90, 0.95, 0.99):
        dims = []
        for layer in keys:
            c = layer - layer.mean(0)
            ev = np.sort(np.linalg.eigvalsh(c.T @ c / len(c)))[::-1]
            dims.append(int(np.searchsorted(np.cumsum(ev) / ev.sum(), share * (1 - 1e-12)) + 1))
        assert rows[("prune", f"pca {share * 100:g}% var")]["kept_dims"] == pytest.approx(np.mean(dims))

    key_cos, rec = [], []
    for l, layer in enumerate(keys):
        pooled = (layer[0::2] + layer[1::2]) / 2          # uniform gate = mean of each pair
        rebuilt = np.repeat(pooled, 2, axis=0)
        key_cos.append(np.mean((layer * rebuilt).sum(1) / np.linalg.norm(layer, axis=1) / np.linalg.norm(rebuilt, axis=1)))
        for qi in qsel:
            q = queries[l, qi].astype(np.float64)
            exact = set(np.argsort(-(layer @ q), kind="stable")[:64])
            groups = np.argsort(-(pooled @ q), kind="stable")[:32]
            rec.append(len(exact & set(np.concatenate([2 * groups, 2 * groups + 1]))) / 64)
    row = rows[("pool", "2:1 tokens sigmoid/uniform")]
    assert row["key_cos"] == pytest.approx(np.mean(key_cos), abs=1e-5)
    assert row["recall@64"] == pytest.approx(np.mean(rec), abs=0.01)   # float vs double near-ties may differ
