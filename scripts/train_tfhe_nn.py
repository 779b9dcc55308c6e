#!/usr/bin/env python3
"""Train the quantised NN-20 / NN-50 / NN-100 networks of the TFHE deep-network workload.

Networks (Chillotti-Joye-Paillier, "Programmable bootstrapping enables efficient homomorphic
inference of deep neural networks", CSCML 2021, as Strix Fig. 7 runs them): a 28x28 input, a
10x11 convolution with 2 output channels, stride 1, padding 1 (output 2x21x20 = 840) and ReLU,
then dense layers of 92 neurons with ReLU, then a dense output layer of 10. NN-d has d weight
layers: the convolution, d-2 hidden dense layers and the output layer.

Data: scikit-learn's bundled `load_digits` (8x8, values 0..16) upsampled to 28x28: every pixel
becomes a 3x3 block (24x24), zero-padded by 2 on each side. 80/20 split, `random_state=0`.

Everything is an integer program that the encrypted evaluation reproduces exactly:
  * input pixels quantised to a in {0..3} (round(v * 3 / 16));
  * weights are integers in [-W, W], biases integers;
  * every ReLU is one lookup table on the pre-activation z in [-8, 8) (plaintext space p = 16
    with the offset p/2): a' = min(3, (max(z, 0) + 1) // 2);
  * arithmetic is modulo 2p = 32 with the negacyclic sign of the padding bit (what the
    ciphertext phase does): a pre-activation outside [-8, 8) wraps, in the clear as encrypted;
  * the output layer's logits are decrypted modulo 32 as signed values in [-16, 16).
Training is quantisation-aware (straight-through estimator) with numpy only; hidden dense layers
start at 2*I, which is an exact identity through the lookup table, so depth 100 still trains.

Usage: python scripts/train_tfhe_nn.py [--out data/weights] [--depths 20 50 100] [--epochs 30]
Deterministic for a given numpy version (fixed seeds).
"""

import argparse
import json
import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

P = 16  # lookup-table input space
HALF = P // 2
ACT_MAX = 3
W_MAX = 3
KH, KW, PAD, CH = 10, 11, 1, 2
H_OUT, W_OUT = 28 + 2 * PAD - KH + 1, 28 + 2 * PAD - KW + 1  # 21, 20
WIDTH = 92


def relu_lut(z):
    return np.minimum(ACT_MAX, (np.maximum(z, 0) + 1) // 2)


def load():
    d = load_digits()
    x8 = d.images.astype(np.int64)
    x24 = np.kron(x8, np.ones((1, 3, 3), dtype=np.int64))
    x28 = np.pad(x24, ((0, 0), (2, 2), (2, 2)))
    xq = np.rint(x28 * ACT_MAX / 16.0).astype(np.int64)
    return train_test_split(xq, d.target, test_size=0.2, random_state=0)


def patches(x):
    """(B, 28, 28) -> (B, 420, 110): im2col of the padded image, row-major (i, j), (di, dj)."""
    xp = np.pad(x, ((0, 0), (PAD, PAD), (PAD, PAD)))
    b = x.shape[0]
    out = np.empty((b, H_OUT * W_OUT, KH * KW), dtype=x.dtype)
    for i in range(H_OUT):
        for j in range(W_OUT):
            out[:, i * W_OUT + j, :] = xp[:, i:i + KH, j:j + KW].reshape(b, -1)
    return out


def wrap_signed(v, modulus):
    return (v + modulus // 2) % modulus - modulus // 2


def int_forward(layers, x):
    """The exact integer program (what the encrypted evaluation computes)."""
    conv_w, conv_b = layers[0]
    pt = patches(x)
    z = np.einsum("bpk,ck->bcp", pt, conv_w) + conv_b[None, :, None]
    a = lut_mod(z.reshape(x.shape[0], -1))
    for w, b in layers[1:-1]:
        a = lut_mod(a @ w.T + b)
    w, b = layers[-1]
    return wrap_signed(a @ w.T + b, 2 * P)


def lut_mod(z):
    """LUT on the phase (z + p/2) mod 2p, negacyclic: the upper half gives -LUT(v - p)."""
    v = (z + HALF) % (2 * P)
    low = v < P
    t = relu_lut(np.where(low, v, v - P) - HALF)
    return np.where(low, t, (-t) % (2 * P))


def q(w):
    return np.clip(np.rint(w), -W_MAX, W_MAX)


class Adam:
    def __init__(self, params, lr):
        self.p, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(x) for x in params]
        self.v = [np.zeros_like(x) for x in params]

    def step(self, grads):
        self.t += 1
        for i, g in enumerate(grads):
            self.m[i] = 0.9 * self.m[i] + 0.1 * g
            self.v[i] = 0.999 * self.v[i] + 0.001 * g * g
            mh = self.m[i] / (1 - 0.9 ** self.t)
            vh = self.v[i] / (1 - 0.999 ** self.t)
            self.p[i] -= self.lr * mh / (np.sqrt(vh) + 1e-8)


def train(depth, xtr, ytr, epochs, seed):
    rng = np.random.default_rng(seed)
    hidden = depth - 2
    params = [rng.normal(0, 0.35, (CH, KH * KW)), np.full(CH, 2.0)]
    params += [rng.normal(0, 0.2, (WIDTH, CH * H_OUT * W_OUT)), np.zeros(WIDTH)]
    for _ in range(hidden - 1):
        params += [2.0 * np.eye(WIDTH) + rng.normal(0, 0.1, (WIDTH, WIDTH)), np.zeros(WIDTH)]
    params += [rng.normal(0, 0.35, (10, WIDTH)), np.zeros(10)]
    opt = Adam(params, 0.05)
    ptr = patches(xtr).astype(np.float64)
    n = xtr.shape[0]
    for ep in range(epochs):
        order = rng.permutation(n)
        for s in range(0, n, 64):
            idx = order[s:s + 64]
            grads = step_grads(params, ptr[idx], ytr[idx])
            opt.step(grads)
        if os.environ.get("TRAIN_VERBOSE"):
            layers = [(q(params[i]).astype(np.int64), np.rint(params[i + 1]).astype(np.int64))
                      for i in range(0, len(params), 2)]
            acc = (int_forward(layers, xtr[:300]).argmax(axis=1) == ytr[:300]).mean()
            print(f"depth {depth} epoch {ep}: train accuracy (300) {acc:.3f}", flush=True)
    return [(q(params[i]).astype(np.int64), np.clip(np.rint(params[i + 1]), -HALF, HALF).astype(np.int64))
            for i in range(0, len(params), 2)]


def step_grads(params, pt, y):
    """Forward with quantised weights and the LUT (saturating), backward straight-through."""
    b = pt.shape[0]
    ws = [q(params[i]) for i in range(0, len(params), 2)]
    bs = [np.rint(params[i + 1]) for i in range(0, len(params), 2)]
    zs, acts = [], []
    z = np.einsum("bpk,ck->bcp", pt, ws[0]) + bs[0][None, :, None]
    z = z.reshape(b, -1)
    a_in = None
    layers_in = []
    for li in range(len(ws)):
        if li > 0:
            layers_in.append(a_in)
            z = a_in @ ws[li].T + bs[li]
        zs.append(z)
        if li < len(ws) - 1:
            zc = np.clip(z, -HALF, HALF - 1)
            a_in = relu_lut(zc).astype(np.float64)
    logits = zs[-1] / 2.0
    logits = logits - logits.max(axis=1, keepdims=True)
    pr = np.exp(logits)
    pr /= pr.sum(axis=1, keepdims=True)
    g = pr.copy()
    g[np.arange(b), y] -= 1.0
    g /= b * 2.0
    # Keep the logits inside the decrypted range [-16, 16).
    g += 0.01 * np.sign(zs[-1]) * (np.abs(zs[-1]) > 14) / b
    grads = [None] * len(params)
    for li in range(len(ws) - 1, -1, -1):
        z = zs[li]
        if li < len(ws) - 1:
            # STE through the LUT (slope 1/2 inside (0, 7)) plus a push back into [-8, 8).
            inside = (z >= -HALF) & (z <= HALF - 1)
            g = g * 0.5 * inside + 0.2 * (np.maximum(z - (HALF - 1), 0) - np.maximum(-HALF - z, 0)) / b
        if li == 0:
            gz = g.reshape(b, CH, -1)
            grads[0] = np.einsum("bcp,bpk->ck", gz, pt)
            grads[1] = gz.sum(axis=(0, 2))
        else:
            a = layers_in[li - 1]
            grads[2 * li] = g.T @ a
            grads[2 * li + 1] = g.sum(axis=0)
            g = g @ ws[li]
    for i in range(0, len(params), 2):
        grads[i] = grads[i] * (np.abs(params[i]) <= W_MAX + 0.5)
    return grads


def enc_weights(w):
    return "".join(chr(ord("0") + int(v) + W_MAX) for v in w.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="data/weights")
    ap.add_argument("--depths", type=int, nargs="+", default=[20, 50, 100])
    ap.add_argument("--epochs", type=int, default=30)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    xtr, xte, ytr, yte = load()
    test = {
        "description": "scikit-learn load_digits test split (20 %, random_state=0), 8x8 upsampled "
                       "to 28x28 (3x3 blocks, zero padding 2), pixels quantised to 0..3",
        "count": int(xte.shape[0]),
        "pixels": "".join(str(int(v)) for v in xte.reshape(-1)),
        "labels": [int(v) for v in yte],
    }
    with open(os.path.join(args.out, "digits_28x28_test.json"), "w") as f:
        json.dump(test, f)
    for depth in args.depths:
        layers = train(depth, xtr, ytr, args.epochs, seed=depth)
        pred_tr = int_forward(layers, xtr).argmax(axis=1)
        pred = int_forward(layers, xte).argmax(axis=1)
        acc_tr = float((pred_tr == ytr).mean())
        acc = float((pred == yte).mean())
        net = {
            "name": f"nn-{depth}",
            "plaintext_modulus": P,
            "activation_max": ACT_MAX,
            "weight_max": W_MAX,
            "conv": {"kh": KH, "kw": KW, "pad": PAD, "out_channels": CH,
                     "weights": enc_weights(layers[0][0]), "bias": layers[0][1].tolist()},
            "dense": [{"inputs": int(w.shape[1]), "outputs": int(w.shape[0]),
                       "weights": enc_weights(w), "bias": b.tolist()} for w, b in layers[1:]],
            "train_accuracy": acc_tr,
            "test_accuracy": acc,
            "test_predictions": [int(v) for v in pred],
        }
        with open(os.path.join(args.out, f"tfhe_nn_{depth}.json"), "w") as f:
            json.dump(net, f)
        print(json.dumps({"network": f"nn-{depth}", "train_accuracy": acc_tr, "test_accuracy": acc}))


if __name__ == "__main__":
    main()
