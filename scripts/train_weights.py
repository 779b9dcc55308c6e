#!/usr/bin/env python3
"""Train the weights of the encrypted MNIST-shaped networks on scikit-learn's bundled digits.

    .venv/bin/python scripts/train_weights.py            # writes data/weights/

No network access: the data is scikit-learn's ``load_digits`` (1,797 images of 8x8, 17 grey
levels, BSD-3-Clause, from the UCI "Optical Recognition of Handwritten Digits" set). Outputs:

- ``digits.bin``: the whole set, shuffled by a fixed seed, training split first: the magic
  ``BDIGITS1``, u16 train count, u16 test count, then per image 64 pixel bytes (0..16) and one
  label byte. The Rust workloads embed it (``include_bytes!``), so the CLI needs no Python.
- ``mlp.bin``, ``lola.bin``: the networks of ``basalt-workloads``'s ``mnist`` module (SecureML's
  MLP 784-128-128-10, LoLa-CryptoNets' conv 5x5x5 stride 2 - 100 - 10) with the **square**
  activation the encrypted run uses, trained in the clear on the 28x28 images below. Format:
  the magic ``BWEIGHT1``, u32 array count, then per array u32 rank, u32 dims, and the values as
  little-endian float16 (rounded from float32; the accuracy printed is the rounded model's).
- ``provenance.json``: seeds, epochs, versions, SHA-256 of every file, accuracies.

Images are resized exactly as the Rust side does (``basalt_workloads::digits``): to 28x28 each
pixel becomes a 3x3 block (24x24) padded by 2 zero pixels on every side; to 14x14 each pixel
becomes a 2x2 block (16x16) with the outer ring cropped. Pixel values are scaled to [0, 1].

Training is full-batch-free minibatch Adam, seeded, about a minute on two cores.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import struct
import sys

import numpy as np

SEED = 20240607
TEST = 450  # of 1,797: 25 %, as scikit-learn's default split
OUT = pathlib.Path(__file__).resolve().parent.parent / "data" / "weights"


def digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The shuffled set: (train images u8 [n,64], train labels, test images, test labels)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    order = np.random.default_rng(SEED).permutation(len(d.target))
    x = d.data[order].astype(np.uint8)
    y = d.target[order].astype(np.uint8)
    n = len(y) - TEST
    return x[:n], y[:n], x[n:], y[n:]


def to28(x: np.ndarray) -> np.ndarray:
    """[n,64] grey levels to [n,784] in [0, 1]: 3x3 blocks, 2 pixels of zero padding."""
    img = x.reshape(-1, 8, 8).astype(np.float64) / 16.0
    big = img.repeat(3, axis=1).repeat(3, axis=2)
    return np.pad(big, ((0, 0), (2, 2), (2, 2))).reshape(-1, 784)


def patches(x28: np.ndarray) -> np.ndarray:
    """LoLa's convolution representation: [n, 169, 25] (position, kernel offset), the image
    zero-padded to 29x29 at the bottom and right, stride 2."""
    img = np.pad(x28.reshape(-1, 28, 28), ((0, 0), (0, 1), (0, 1)))
    out = np.empty((len(img), 169, 25))
    for o in range(25):
        di, dj = divmod(o, 5)
        out[:, :, o] = img[:, di : di + 25 : 2, dj : dj + 25 : 2].reshape(-1, 169)
    return out


class Adam:
    def __init__(self, params: list[np.ndarray], lr: float):
        self.p, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(a) for a in params]
        self.v = [np.zeros_like(a) for a in params]

    def step(self, grads: list[np.ndarray]) -> None:
        self.t += 1
        for p, g, m, v in zip(self.p, grads, self.m, self.v):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            mh = m / (1 - 0.9**self.t)
            vh = v / (1 - 0.999**self.t)
            p -= self.lr * mh / (np.sqrt(vh) + 1e-8)


def softmax_grad(logits: np.ndarray, y: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(y)), y] -= 1.0
    return p / len(y)


def dense_init(rng, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.normal(0.0, 1.0 / np.sqrt(cols), (rows, cols)), np.zeros(rows)


def train_mlp(xtr, ytr, rng, epochs=40):
    """784-128-128-10 with squares: returns [W1, b1, W2, b2, W3, b3] (rows = outputs)."""
    w1, b1 = dense_init(rng, 128, 784)
    w2, b2 = dense_init(rng, 128, 128)
    w3, b3 = dense_init(rng, 10, 128)
    params = [w1, b1, w2, b2, w3, b3]
    opt = Adam(params, 2e-3)
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(len(ytr)), len(ytr) // 64):
            x, y = xtr[idx], ytr[idx]
            a1 = x @ w1.T + b1
            h1 = a1 * a1
            a2 = h1 @ w2.T + b2
            h2 = a2 * a2
            g3 = softmax_grad(h2 @ w3.T + b3, y)
            gh2 = g3 @ w3
            g2 = gh2 * 2 * a2
            gh1 = g2 @ w2
            g1 = gh1 * 2 * a1
            opt.step([g1.T @ x, g1.sum(0), g2.T @ h1, g2.sum(0), g3.T @ h2, g3.sum(0)])
    return params


def mlp_forward(p, x):
    w1, b1, w2, b2, w3, b3 = p
    h1 = (x @ w1.T + b1) ** 2
    h2 = (h1 @ w2.T + b2) ** 2
    return h2 @ w3.T + b3


def train_lola(ptr, ytr, rng, epochs=40):
    """conv (5 maps of 25 offsets) - square - 845->100 - square - 100->10.

    Returns [K (5x25), kb (5), W2 (100x845), b2, W3 (10x100), b3]; the conv output is ordered
    map-major (slot m*169 + position), as the encrypted run packs it."""
    k = rng.normal(0.0, 1.0 / 5.0, (5, 25))
    kb = np.zeros(5)
    w2, b2 = dense_init(rng, 100, 845)
    w3, b3 = dense_init(rng, 10, 100)
    params = [k, kb, w2, b2, w3, b3]
    opt = Adam(params, 2e-3)
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(len(ytr)), len(ytr) // 64):
            p, y = ptr[idx], ytr[idx]
            a1 = np.einsum("npo,mo->nmp", p, k) + kb[None, :, None]  # [n,5,169]
            h1 = (a1 * a1).reshape(len(y), 845)
            a2 = h1 @ w2.T + b2
            h2 = a2 * a2
            g3 = softmax_grad(h2 @ w3.T + b3, y)
            g2 = (g3 @ w3) * 2 * a2
            g1 = ((g2 @ w2).reshape(len(y), 5, 169)) * 2 * a1
            gk = np.einsum("nmp,npo->mo", g1, p)
            opt.step([gk, g1.sum((0, 2)), g2.T @ h1, g2.sum(0), g3.T @ h2, g3.sum(0)])
    return params


def lola_forward(params, p):
    k, kb, w2, b2, w3, b3 = params
    a1 = np.einsum("npo,mo->nmp", p, k) + kb[None, :, None]
    h1 = (a1 * a1).reshape(len(p), 845)
    h2 = (h1 @ w2.T + b2) ** 2
    return h2 @ w3.T + b3


def bound_logits(params: list[np.ndarray], logits: np.ndarray, bound: float = 16.0) -> None:
    """Scale the last layer so that no training logit exceeds ``bound``: the arg-max is
    unchanged, and the scores fit the last level of a chain with a 40-bit ``q_0`` and a 32-bit
    scale (Osiris' Set I leaves ``|m| < 2^7``)."""
    k = bound / np.abs(logits).max()
    params[-2] *= k
    params[-1] *= k


def write_weights(path: pathlib.Path, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Write as float16; return the rounded arrays (the model the encrypted run evaluates)."""
    out = bytearray(b"BWEIGHT1")
    out += struct.pack("<I", len(arrays))
    rounded = []
    for a in arrays:
        h = a.astype("<f2")
        out += struct.pack("<I", a.ndim) + struct.pack(f"<{a.ndim}I", *a.shape)
        out += h.tobytes()
        rounded.append(h.astype(np.float64))
    path.write_bytes(bytes(out))
    return rounded


def main() -> int:
    import sklearn

    OUT.mkdir(parents=True, exist_ok=True)
    xtr, ytr, xte, yte = digits()
    blob = bytearray(b"BDIGITS1") + struct.pack("<HH", len(ytr), len(yte))
    for x, y in zip(np.concatenate([xtr, xte]), np.concatenate([ytr, yte])):
        blob += x.tobytes() + bytes([int(y)])
    (OUT / "digits.bin").write_bytes(bytes(blob))

    rng = np.random.default_rng(SEED)
    tr28, te28 = to28(xtr), to28(xte)
    record = {
        "data": {
            "source": "sklearn.datasets.load_digits (UCI optical digits, BSD-3-Clause)",
            "shuffle_seed": SEED,
            "train": int(len(ytr)),
            "test": int(len(yte)),
            "resize_28": "3x3 blocks (24x24), 2 zero pixels of padding per side, /16",
            "resize_14": "2x2 blocks (16x16), outer ring cropped, /16",
        },
        "versions": {"numpy": np.__version__, "scikit-learn": sklearn.__version__},
        "models": {},
    }
    mlp = train_mlp(tr28, ytr, rng)
    bound_logits(mlp, mlp_forward(mlp, tr28))
    mlp = write_weights(OUT / "mlp.bin", mlp)
    acc = float((mlp_forward(mlp, te28).argmax(1) == yte).mean())
    record["models"]["mlp"] = {"epochs": 40, "optimizer": "Adam 2e-3, batch 64",
                               "activation": "square",
                               "logits_bounded_to": 16.0, "test_accuracy": acc}
    print(f"mlp: test accuracy {acc:.4f}", file=sys.stderr)

    lola = train_lola(patches(tr28), ytr, rng)
    bound_logits(lola, lola_forward(lola, patches(tr28)))
    lola = write_weights(OUT / "lola.bin", lola)
    acc = float((lola_forward(lola, patches(te28)).argmax(1) == yte).mean())
    record["models"]["lola"] = {"epochs": 40, "optimizer": "Adam 2e-3, batch 64",
                                "activation": "square",
                               "logits_bounded_to": 16.0, "test_accuracy": acc}
    print(f"lola: test accuracy {acc:.4f}", file=sys.stderr)

    record["sha256"] = {
        f: hashlib.sha256((OUT / f).read_bytes()).hexdigest()
        for f in ["digits.bin", "mlp.bin", "lola.bin"]
    }
    (OUT / "provenance.json").write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
