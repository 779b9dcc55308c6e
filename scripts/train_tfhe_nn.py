#!/usr/bin/env python3
"""Train the quantised NN-20 / NN-50 / NN-100 networks of the TFHE deep-network workload.

Networks (Chillotti-Joye-Paillier, "Programmable bootstrapping enables efficient homomorphic
inference of deep neural networks", CSCML 2021, as Strix Fig. 7 runs them): a 28x28 input, a
10x11 convolution with 2 output channels, stride 1, padding 1 (output 2x21x20 = 840) and ReLU,
then dense layers of 92 neurons with ReLU, then a dense output layer of 10. NN-d has d weight
layers: the convolution, d-2 hidden dense layers and the output layer.

Data: scikit-learn's bundled `load_digits` (8x8, values 0..16) upsampled to 28x28: every pixel
becomes a 3x3 block (24x24), zero-padded by 2 on each side. 80/20 split, `random_state=0`.

The integer program (what the encrypted evaluation computes, bit for bit):
  * input pixels quantised to a in {0..3} (round(v * 3 / 16));
  * weights are integers in [-3, 3], biases integers;
  * every ReLU is one lookup table on the pre-activation z (plaintext space p = 16, offset p/2):
    a' = min(3, (max(z, 0) + 1) // 2), correct for z in [-8, 8);
  * arithmetic is modulo 2p = 32 with the negacyclic sign of the padding bit: a pre-activation
    outside [-8, 8) *wraps* (z = 8 gives 0, z = -9 gives -3), in the clear as encrypted;
  * the output layer's logits are read modulo 32 as signed values in [-16, 16).

Why training must know the range: one bootstrap sees 16 values, so a neuron whose z leaves
[-8, 8) does not saturate, it wraps to a wrong (even negative) activation, and a network trained
with a saturating ReLU collapses to chance once evaluated as the ciphertexts compute it. The
training forward therefore clips z only where the gradient needs it and adds a hinge penalty on
every pre-activation (and logit) outside its window, which drives the quantised weight rows to
be sparse (a few +-1, +-2 per row) so that z stays in range on the data; model selection uses
the exact wrapping program.

Depth (perturbed-identity initialisation, joint training): the core network (convolution, first
dense layer, output layer) is trained first; NN-d then inserts d - 3 hidden 92x92 layers
initialised at W = 2I + R, b = 0, with R a seeded Gaussian perturbation of the float weights
(2I alone is the identity through the table, 2a -> a; R breaks that symmetry), and trains all
layers jointly with the same straight-through estimator and window penalty, keeping the epoch
with the best exact training accuracy (the start is not a candidate). Every hidden layer is a
real 92x92 layer with one bootstrap per neuron; the output records how many hidden weights
differ from 2I and the test accuracy with every hidden layer replaced by 2I (an ablation: the
hidden layers matter if it differs).

Usage: python scripts/train_tfhe_nn.py [--out data/weights] [--depths 20 50 100]
Deterministic for a given numpy version (fixed seeds, one BLAS thread); minutes on one core.
"""

import argparse
import hashlib
import json
import os
import sys

# One BLAS thread: the same sums in the same order on every machine (reproducible weights), and
# no oversubscription of a shared machine.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

P = 16  # lookup-table input space
HALF = P // 2
Z_LO, Z_HI = -HALF, HALF - 1  # pre-activations the table reads correctly
LOGIT_LO, LOGIT_HI = -P, P - 1  # logits read correctly (modulo 2p, signed)
ACT_MAX = 3
W_MAX = 3
KH, KW, PAD, CH = 10, 11, 1, 2
H_OUT, W_OUT = 28 + 2 * PAD - KH + 1, 28 + 2 * PAD - KW + 1  # 21, 20
WIDTH = 92
BATCH = 64
CORE_SEED = 3


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
    v = sliding_window_view(xp, (KH, KW), axis=(1, 2))
    return np.ascontiguousarray(v).reshape(x.shape[0], H_OUT * W_OUT, KH * KW)


def wrap_signed(v, modulus):
    return (v + modulus // 2) % modulus - modulus // 2


def lut_mod(z):
    """LUT on the phase (z + p/2) mod 2p, negacyclic: the upper half gives -LUT(v - p)."""
    v = (z + HALF) % (2 * P)
    low = v < P
    t = relu_lut(np.where(low, v, v - P) - HALF)
    return np.where(low, t, (-t) % (2 * P))


def conv(pt, w, b):
    """(B, 420, 110) patches -> (B, 840) channel-major pre-activations."""
    n = pt.shape[0]
    z = (pt.reshape(-1, KH * KW) @ w.T).reshape(n, H_OUT * W_OUT, CH).transpose(0, 2, 1)
    return (z + b[None, :, None]).reshape(n, -1)


def pre_activations(layers, x, pt=None):
    """The exact integer program: every layer's pre-activations, the logits last (unwrapped).
    `pt`: the images' patches as float32 (exact: every sum is an integer below 2^24)."""
    if pt is None:
        pt = patches(x).astype(np.float32)
    w, b = layers[0]
    z = np.rint(conv(pt, w.astype(np.float32), b.astype(np.float32))).astype(np.int64)
    zs = [z]
    a = lut_mod(z)
    for w, b in layers[1:]:
        # float64 products of small integers are exact (BLAS instead of numpy's integer loop).
        z = np.rint(a.astype(np.float64) @ w.T.astype(np.float64) + b).astype(np.int64)
        zs.append(z)
        a = lut_mod(z)
    return zs


def int_forward(layers, x, pt=None):
    """Logits of the exact integer program (what the encrypted evaluation decrypts)."""
    return wrap_signed(pre_activations(layers, x, pt)[-1], 2 * P)


def out_of_range(layers, x):
    """Fraction of pre-activations outside the table's window, per layer (logits: [-16, 16))."""
    zs = pre_activations(layers, x)
    fr = [float(((z < Z_LO) | (z > Z_HI)).mean()) for z in zs[:-1]]
    return fr + [float(((zs[-1] < LOGIT_LO) | (zs[-1] > LOGIT_HI)).mean())]


def accuracy(layers, x, y, pt=None):
    return float((int_forward(layers, x, pt).argmax(axis=1) == y).mean())


def qw(w):
    return np.clip(np.rint(w), -W_MAX, W_MAX)


def qb(b, last):
    return np.clip(np.rint(b), LOGIT_LO, LOGIT_HI) if last else np.clip(np.rint(b), -HALF, HALF)


def export(params):
    n = len(params) // 2
    return [(qw(params[2 * i]).astype(np.int64), qb(params[2 * i + 1], i == n - 1).astype(np.int64))
            for i in range(n)]


class Adam:
    def __init__(self, params, lr, mult):
        self.p, self.lr, self.mult, self.t = params, lr, mult, 0
        self.m = [np.zeros_like(x) for x in params]
        self.v = [np.zeros_like(x) for x in params]

    def step(self, grads):
        self.t += 1
        for i, g in enumerate(grads):
            self.m[i] = 0.9 * self.m[i] + 0.1 * g
            self.v[i] = 0.999 * self.v[i] + 0.001 * g * g
            mh = self.m[i] / (1 - 0.9 ** self.t)
            vh = self.v[i] / (1 - 0.999 ** self.t)
            self.p[i] -= self.lr * self.mult[i] * mh / (np.sqrt(vh) + 1e-8)


def grads_of(params, pt, y, lam, temp):
    """Forward with rounded weights and the table (z clipped to its window), backward through a
    straight-through estimator, plus the hinge penalty `lam` on out-of-window pre-activations."""
    b = pt.shape[0]
    n = len(params) // 2
    ws = [qw(params[2 * i]) for i in range(n)]
    bs = [qb(params[2 * i + 1], i == n - 1) for i in range(n)]
    zs, ins = [], []
    a = None
    for li in range(n):
        if li == 0:
            z = conv(pt, ws[0], bs[0])
        else:
            ins.append(a)
            z = a @ ws[li].T + bs[li]
        zs.append(z)
        if li < n - 1:
            a = relu_lut(np.clip(z, Z_LO, Z_HI)).astype(np.float64)
    zo = zs[-1]
    lo = zo / temp
    lo = lo - lo.max(axis=1, keepdims=True)
    pr = np.exp(lo)
    pr /= pr.sum(axis=1, keepdims=True)
    g = pr
    g[np.arange(b), y] -= 1.0
    g /= b * temp
    g += lam * (np.maximum(zo - LOGIT_HI, 0) - np.maximum(LOGIT_LO - zo, 0)) / b
    grads = [None] * len(params)
    for li in range(n - 1, -1, -1):
        z = zs[li]
        if li < n - 1:
            # The table rises by 1/2 per step on [0, 6]; a small leak keeps dead units trainable.
            inside = (z >= Z_LO) & (z <= Z_HI)
            slope = np.where((z >= -1) & (z <= 6), 0.5, 0.05) * inside
            g = g * slope + lam * (np.maximum(z - Z_HI, 0) - np.maximum(Z_LO - z, 0)) / b
        if li == 0:
            gz = g.reshape(b, CH, -1)
            grads[0] = gz.transpose(1, 0, 2).reshape(CH, -1) @ pt.reshape(-1, KH * KW)
            grads[1] = gz.sum(axis=(0, 2))
        else:
            grads[2 * li] = g.T @ ins[li - 1]
            grads[2 * li + 1] = g.sum(axis=0)
            g = g @ ws[li]
    for i in range(0, len(params), 2):
        grads[i] = grads[i] * (np.abs(params[i]) <= W_MAX + 0.5)
    return grads


def fit(params, mult, xtr, ytr, ptr, epochs, lr, seed, tag, lam=1.0, temp=2.0, keep_start=True):
    """Adam with a cosine schedule; returns the epoch's network with the best exact training
    accuracy (the starting network included only with `keep_start`)."""
    rng = np.random.default_rng(seed)
    opt = Adam(params, lr, mult)
    best_layers = export(params)
    ptf = ptr.astype(np.float32)
    start = accuracy(best_layers, xtr, ytr, ptf)
    best = start if keep_start else -1.0
    log(f"{tag} start: train accuracy {start:.3f}")
    n = xtr.shape[0]
    for ep in range(epochs):
        opt.lr = lr * 0.5 * (1 + np.cos(np.pi * ep / epochs))
        order = rng.permutation(n)
        for s in range(0, n, BATCH):
            idx = order[s:s + BATCH]
            opt.step(grads_of(params, ptr[idx].astype(np.float64), ytr[idx], lam, temp))
        layers = export(params)
        acc = accuracy(layers, xtr, ytr, ptf)
        log(f"{tag} epoch {ep}: train accuracy {acc:.3f}")
        if acc >= best:
            best, best_layers = acc, layers
    return best_layers


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def train_core(xtr, ytr, ptr, epochs):
    """Convolution, first dense layer, output layer."""
    rng = np.random.default_rng(CORE_SEED)
    params = [rng.normal(0, 0.3, (CH, KH * KW)), np.zeros(CH),
              rng.normal(0, 0.12, (WIDTH, CH * H_OUT * W_OUT)), np.zeros(WIDTH),
              rng.normal(0, 0.3, (10, WIDTH)), np.zeros(10)]
    return fit(params, [1.0] * 6, xtr, ytr, ptr, epochs, 0.005, CORE_SEED, "core")


def deepen(core, depth, init_std, seed):
    """Insert depth - 3 hidden layers between the first dense layer and the output layer, each
    initialised at W = 2I + R, b = 0, where R is a seeded Gaussian perturbation of standard
    deviation `init_std` (float weights: R moves a rounded weight once |R| > 1/2). 2I alone is
    the identity through the table (2a -> a); R breaks the symmetry so that joint training
    shapes every hidden layer instead of leaving it at the identity."""
    rng = np.random.default_rng(seed)
    hidden = []
    for _ in range(depth - 3):
        w = 2.0 * np.eye(WIDTH) + rng.normal(0.0, init_std, (WIDTH, WIDTH))
        hidden.append((w, np.zeros(WIDTH)))
    return [(w.astype(np.float64), b.astype(np.float64)) for w, b in core[:2]] + hidden \
        + [(w.astype(np.float64), b.astype(np.float64)) for w, b in core[2:]]


def finetune(layers, xtr, ytr, ptr, epochs, lr, hidden_mult, seed):
    """Train every layer jointly; the starting network is not a candidate (its hidden layers
    are the perturbed identities, not trained ones)."""
    params = []
    for w, b in layers:
        params += [w.copy(), b.copy()]
    mult = [1.0] * 4 + [hidden_mult] * (len(params) - 6) + [1.0] * 2
    return fit(params, mult, xtr, ytr, ptr, epochs, lr, seed, f"nn-{len(layers)}",
               keep_start=False)


def hidden_stats(layers):
    """How far the hidden layers are from the identity 2I (weights and biases)."""
    eye = 2 * np.eye(WIDTH, dtype=np.int64)
    hidden = layers[2:-1]
    if not hidden:
        return {"layers": 0}
    diff = [int((w != eye).sum()) for w, _ in hidden]
    return {
        "layers": len(hidden),
        "weights_differing_from_2I": int(sum(diff)),
        "fraction_of_weights_differing_from_2I": sum(diff) / (len(hidden) * WIDTH * WIDTH),
        "per_layer_weights_differing_from_2I": diff,
        "nonzero_biases": int(sum(int((b != 0).sum()) for _, b in hidden)),
        "layers_equal_to_identity": int(sum(1 for (w, b) in hidden
                                            if (w == eye).all() and (b == 0).all())),
        "rows_with_off_diagonal_weights": int(sum(int(((w - np.diag(np.diag(w))) != 0)
                                                      .any(axis=1).sum()) for w, _ in hidden)),
        "mean_nonzero_weights_per_row": float(np.mean([(w != 0).sum(axis=1).mean()
                                                       for w, _ in hidden])),
    }


def enc_weights(w):
    return "".join(chr(ord("0") + int(v) + W_MAX) for v in w.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="data/weights")
    ap.add_argument("--depths", type=int, nargs="+", default=[20, 50, 100])
    ap.add_argument("--core-epochs", type=int, default=30)
    ap.add_argument("--finetune-epochs", type=int, default=20)
    ap.add_argument("--finetune-lr", type=float, default=0.005)
    ap.add_argument("--hidden-lr-mult", type=float, default=1.0)
    ap.add_argument("--hidden-init-std", type=float, default=0.15)
    args = ap.parse_args()
    if any(d < 3 for d in args.depths):
        ap.error("depth must be at least 3")
    os.makedirs(args.out, exist_ok=True)
    xtr, xte, ytr, yte = load()
    ptr = patches(xtr).astype(np.int8)
    test = {
        "description": "scikit-learn load_digits test split (20 %, random_state=0), 8x8 upsampled "
                       "to 28x28 (3x3 blocks, zero padding 2), pixels quantised to 0..3",
        "count": int(xte.shape[0]),
        "pixels": "".join(str(int(v)) for v in xte.reshape(-1)),
        "labels": [int(v) for v in yte],
    }
    with open(os.path.join(args.out, "digits_28x28_test.json"), "w") as f:
        json.dump(test, f)
    core = train_core(xtr, ytr, ptr, args.core_epochs)
    core_acc = accuracy(core, xte, yte)
    log(f"core: test accuracy {core_acc:.3f}")
    for depth in args.depths:
        start = deepen(core, depth, args.hidden_init_std, seed=1000 + depth)
        start_acc = accuracy(export([a for wb in start for a in wb]), xte, yte)
        layers = finetune(start, xtr, ytr, ptr, args.finetune_epochs,
                          args.finetune_lr, args.hidden_lr_mult, seed=depth)
        pred_tr = int_forward(layers, xtr).argmax(axis=1)
        pred = int_forward(layers, xte).argmax(axis=1)
        acc_tr = float((pred_tr == ytr).mean())
        acc = float((pred == yte).mean())
        hs = hidden_stats(layers)
        # Ablation: the same network with every hidden layer replaced by the identity 2I. If the
        # hidden layers were identities (or did nothing), this would not change the accuracy.
        eye = (2 * np.eye(WIDTH, dtype=np.int64), np.zeros(WIDTH, dtype=np.int64))
        bypass_acc = accuracy(layers[:2] + [eye] * (depth - 3) + layers[-1:], xte, yte)
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
            "training": {
                # Depths are independent (same core, own seeds): this network alone.
                "command": f"python scripts/train_tfhe_nn.py --depths {depth}"
                           + f" --core-epochs {args.core_epochs}"
                           + f" --finetune-epochs {args.finetune_epochs}"
                           + f" --finetune-lr {args.finetune_lr}"
                           + f" --hidden-lr-mult {args.hidden_lr_mult}"
                           + f" --hidden-init-std {args.hidden_init_std}",
                "method": "quantisation-aware (straight-through), hinge penalty on pre-activations "
                          "outside the table's window; core (conv, dense, output) trained first, "
                          "hidden layers initialised at 2I plus a seeded Gaussian perturbation and "
                          "trained jointly with the core (the start is not a candidate)",
                "seeds": {"core": CORE_SEED, "hidden_init": 1000 + depth, "finetune": depth},
                "start_test_accuracy": start_acc,
                "core_test_accuracy": core_acc,
                "numpy": np.__version__,
                "scikit_learn": __import__("sklearn").__version__,
                "test_out_of_window_fraction": out_of_range(layers, xte),
                "hidden_layers": hs,
                "test_accuracy_hidden_layers_replaced_by_identity": bypass_acc,
            },
        }
        path = os.path.join(args.out, f"tfhe_nn_{depth}.json")
        with open(path, "w") as f:
            json.dump(net, f)
        with open(path, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        print(json.dumps({"network": f"nn-{depth}", "train_accuracy": acc_tr,
                          "test_accuracy": acc, "sha256": sha,
                          "hidden_fraction_differing_from_2I":
                              hs.get("fraction_of_weights_differing_from_2I"),
                          "test_accuracy_hidden_replaced_by_identity": bypass_acc}), flush=True)


if __name__ == "__main__":
    main()
