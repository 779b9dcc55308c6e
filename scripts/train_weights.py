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
- ``lenet.bin``, ``lenet_toy.bin``: Orion's LeNet (``basalt_workloads::lenet``; conv 5x5 1->32
  s2, square, conv 5x5 32->64 s2, square, 3136->512, square, 512->10) on 28x28 images, and the
  toy shape of the ``--quick`` runs (conv 3x3 1->8 s2, conv 3x3 8->16 s2, 64->16->10) on the
  raw 8x8 images; arrays conv1 [c,1,k,k], bias, conv2 [c2,c1,k,k], bias, dense, bias, dense,
  bias.
- ``lstm.bin``, ``lstm_toy.bin``: CraterLake's recurrence ``h <- sigma(W0 h + W1 x)``
  (``basalt_workloads::lstm``) at width 128 over the 28 rows of the 28x28 image, and at width
  16 over the 8 rows of the raw image, with a dense 10-way classifier on the last state;
  arrays W0, W1, readout, readout bias.
- ``resnet20.bin``, ``resnet_toy.bin``: ResNet-20 (``basalt_workloads::resnet``; conv 3x3
  3->16, 3 stages x 3 basic blocks of 16/32/64 channels, 1x1 stride-2 shortcuts, average
  pool, dense 64->10) on the digits as 32x32x3 (each pixel a 4x4 block, the grey plane in all
  three channels), and the toy of the ``--quick`` runs (4/8/16 channels, one block per stage)
  on 4x4x3 (2x2 means). Trained with the exact ReLU and no batch norm (Fixup's initialisation),
  then every ReLU input is scaled to peak at 0.5 on the training split (the function
  unchanged), inside [-1, 1] where the encrypted run's composite minimax sign is defined;
  arrays: every convolution [cout, cin, k, k] and its bias in ``Arch::run`` order (stem, then
  per block conv1, conv2 and the shortcut of a stage's first block), dense [10, c], bias.
- ``provenance.json``: seeds, epochs, versions, SHA-256 of every file, accuracies (merged:
  ``--models`` retrains a subset and keeps the other entries).

Images are resized exactly as the Rust side does (``basalt_workloads::digits``): to 28x28 each
pixel becomes a 3x3 block (24x24) padded by 2 zero pixels on every side; to 14x14 each pixel
becomes a 2x2 block (16x16) with the outer ring cropped. Pixel values are scaled to [0, 1].

Training is minibatch Adam, seeded, on one BLAS thread: about five minutes on two busy cores
(``--models mlp,lola`` about two, ``lenet`` three, the rest seconds) plus ResNet-20's
(``--models resnet20``: 10 epochs, 20 minutes on two cores shared with other jobs).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import struct
import sys
import time

# One BLAS thread: the same summation order on every machine (reproducible weights), and no
# spinning worker threads on a busy machine (they made the LSTM's small products 20x slower).
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

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


# --- LeNet (Orion's, Osiris Set II) -------------------------------------------------------------


def im2col(x: np.ndarray, k: int, stride: int) -> np.ndarray:
    """[n, c, h, w] zero-padded by k//2 to [n, ho*wo, c*k*k] (column order c, di, dj: the
    order of ``basalt_workloads::resnet::Conv``'s weights)."""
    n, c, h, w = x.shape
    p = k // 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    ho, wo = (h + 2 * p - k) // stride + 1, (w + 2 * p - k) // stride + 1
    cols = np.empty((n, c, k, k, ho, wo))
    for di in range(k):
        for dj in range(k):
            cols[:, :, di, dj] = xp[:, :, di : di + stride * ho : stride, dj : dj + stride * wo : stride]
    return np.ascontiguousarray(cols.reshape(n, c * k * k, ho * wo).transpose(0, 2, 1)), ho, wo


def col2im(g: np.ndarray, shape, k: int, stride: int) -> np.ndarray:
    """The adjoint of :func:`im2col`: [n, ho*wo, c*k*k] back onto [n, c, h, w]."""
    n, c, h, w = shape
    p = k // 2
    ho, wo = (h + 2 * p - k) // stride + 1, (w + 2 * p - k) // stride + 1
    cols = g.transpose(0, 2, 1).reshape(n, c, k, k, ho, wo)
    xp = np.zeros((n, c, h + 2 * p, w + 2 * p))
    for di in range(k):
        for dj in range(k):
            xp[:, :, di : di + stride * ho : stride, dj : dj + stride * wo : stride] += cols[:, :, di, dj]
    return xp[:, :, p : p + h, p : p + w]


# The shapes of ``basalt_workloads::lenet::Shape``: (side, [c1, c2], kernel, hidden).
LENET_ORION = (28, (32, 64), 5, 512)
LENET_TOY = (8, (8, 16), 3, 16)


def lenet_forward(params, x, shape, keep=False):
    """conv s2 - x^2 - conv s2 - x^2 - dense - x^2 - dense on [n, side*side] images."""
    side, (c1, c2), k, hidden = shape
    k1, b1, k2, b2, w3, b3, w4, b4 = params
    n = len(x)
    p1, h1o, w1o = im2col(x.reshape(n, 1, side, side), k, 2)
    a1 = (p1.reshape(-1, p1.shape[2]) @ k1.reshape(c1, -1).T).reshape(n, -1, c1) + b1
    z1 = (a1 * a1).transpose(0, 2, 1).reshape(n, c1, h1o, w1o)
    p2, h2o, w2o = im2col(z1, k, 2)
    a2 = (p2.reshape(-1, p2.shape[2]) @ k2.reshape(c2, -1).T).reshape(n, -1, c2) + b2
    z2 = (a2 * a2).transpose(0, 2, 1).reshape(n, -1)  # PyTorch's flatten order c, i, j
    a3 = z2 @ w3.T + b3
    z3 = a3 * a3
    out = z3 @ w4.T + b4
    if keep:
        return out, (p1, a1, z1, p2, a2, z2, a3, z3)
    return out


def train_lenet(xtr, ytr, rng, shape, epochs, lr=1e-3):
    """Orion's LeNet with the square activation. Batch norms are not trained: the encrypted
    run folds them into the weights anyway, and a data-dependent initialisation (each layer
    scaled to unit pre-activation spread on the first batch) keeps the squares in range."""
    side, (c1, c2), k, hidden = shape
    r2 = side // 4
    params = [
        rng.normal(0, 1 / k, (c1, 1, k, k)), np.zeros(c1),
        rng.normal(0, 1 / np.sqrt(c1 * k * k), (c2, c1, k, k)), np.zeros(c2),
        rng.normal(0, 1 / np.sqrt(c2 * r2 * r2), (hidden, c2 * r2 * r2)), np.zeros(hidden),
        rng.normal(0, 1 / np.sqrt(hidden), (10, hidden)), np.zeros(10),
    ]
    # Data-dependent initialisation: unit spread before every square.
    x0 = xtr[:256]
    for layer in range(3):
        _, (p1, a1, z1, p2, a2, z2, a3, z3) = lenet_forward(params, x0, shape, keep=True)
        a = [a1, a2, a3][layer]
        s = a.std()
        params[2 * layer] /= s
        params[2 * layer + 1] /= s
    opt = Adam(params, lr)
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(len(ytr)), len(ytr) // 32):
            x, y = xtr[idx], ytr[idx]
            n = len(y)
            out, (p1, a1, z1, p2, a2, z2, a3, z3) = lenet_forward(params, x, shape, keep=True)
            k1, b1, k2, b2, w3, b3, w4, b4 = params
            g4 = softmax_grad(out, y)
            gz3 = g4 @ w4
            g3 = gz3 * 2 * a3
            gz2 = (g3 @ w3).reshape(n, c2, -1).transpose(0, 2, 1)  # [n, pos, c2]
            g2 = gz2 * 2 * a2
            gk2 = (g2.reshape(-1, c2).T @ p2.reshape(-1, p2.shape[2])).reshape(k2.shape)
            gp2 = (g2.reshape(-1, c2) @ k2.reshape(c2, -1)).reshape(n, -1, k2[0].size)
            gz1 = col2im(gp2, z1.shape, k, 2).reshape(n, c1, -1).transpose(0, 2, 1)
            g1 = gz1 * 2 * a1
            gk1 = (g1.reshape(-1, c1).T @ p1.reshape(-1, p1.shape[2])).reshape(k1.shape)
            opt.step([gk1, g1.sum((0, 1)), gk2, g2.sum((0, 1)), g3.T @ z2, g3.sum(0),
                      g4.T @ z3, g4.sum(0)])
    return params


def normalise_lenet(params, x, shape, peak: float = 1.0) -> None:
    """Fold a constant into each layer so that its outputs over ``x`` peak at ``peak`` (what a
    folded batch norm's scale does), compensated exactly by the next layer (``(k a)^2 = k^2
    a^2``): the network's function is unchanged, and the encrypted run's values stay near 1."""
    for layer in range(3):
        _, (p1, a1, z1, p2, a2, z2, a3, z3) = lenet_forward(params, x, shape, keep=True)
        k = peak / np.abs([a1, a2, a3][layer]).max()
        params[2 * layer] *= k
        params[2 * layer + 1] *= k
        params[2 * layer + 2] /= k * k


# --- LSTM (CraterLake's Elman recurrence) -------------------------------------------------------

LSTM_BOUND = 2.0  # basalt_workloads::lstm::INPUT_BOUND


def lstm_sigma():
    """The degree-3 odd Chebyshev interpolant of tanh(B u) on [-1, 1] (first-kind nodes, as
    ``Chebyshev::interpolate``), as monomial coefficients (c1, c3) of ``c1 u + c3 u^3``."""
    from numpy.polynomial import chebyshev as C

    c = C.chebinterpolate(lambda u: np.tanh(LSTM_BOUND * u), 3)
    return c[1] - 3 * c[3], 4 * c[3]


def lstm_sequences(x8: np.ndarray, side: int, width: int) -> np.ndarray:
    """Digits as row sequences: [n, side steps, width] with the row's pixels, a constant 1 (the
    recurrence has no bias; the constant input carries it) and zeros."""
    img = x8.reshape(-1, 8, 8).astype(np.float64) / 16.0
    if side == 28:
        img = np.pad(img.repeat(3, axis=1).repeat(3, axis=2), ((0, 0), (2, 2), (2, 2)))
    seq = np.zeros((len(img), side, width))
    seq[:, :, :side] = img
    seq[:, :, side] = 1.0
    return seq


def lstm_forward(params, seq, keep=False):
    w0, w1, w2, b2 = params
    c1, c3 = lstm_sigma()
    n, steps, width = seq.shape
    h = np.zeros((n, width))
    cache = []
    for t in range(steps):
        u = (h @ w0.T + seq[:, t] @ w1.T) / LSTM_BOUND
        cache.append((h, u))
        h = c1 * u + c3 * u**3
    out = h @ w2.T + b2
    return (out, h, cache) if keep else out


def train_lstm(seq, y, rng, epochs, lr=3e-3):
    """BPTT with Adam through the polynomial activation; a penalty keeps every
    pre-activation inside [-B, B], where the polynomial approximates tanh."""
    n, steps, width = seq.shape
    a = 1 / np.sqrt(width)
    params = [rng.uniform(-a, a, (width, width)) * 0.5, rng.uniform(-a, a, (width, width)),
              rng.normal(0, a, (10, width)), np.zeros(10)]
    c1, c3 = lstm_sigma()
    opt = Adam(params, lr)
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(n), n // 32):
            s, yy = seq[idx], y[idx]
            w0, w1, w2, b2 = params
            out, h, cache = lstm_forward(params, s, keep=True)
            g = softmax_grad(out, yy)
            gw2, gb2 = g.T @ h, g.sum(0)
            gh = g @ w2
            gw0, gw1 = np.zeros_like(w0), np.zeros_like(w1)
            for t in reversed(range(steps)):
                hp, u = cache[t]
                gu = gh * (c1 + 3 * c3 * u * u)
                over = np.maximum(np.abs(u) - 0.9, 0) * np.sign(u)
                gu = gu + 10.0 * over / len(yy)
                gz = gu / LSTM_BOUND
                gw0 += gz.T @ hp
                gw1 += gz.T @ s[:, t]
                gh = gz @ w0
            opt.step([gw0, gw1, gw2, gb2])
    return params


def lstm_max_pre(params, seq) -> float:
    _, _, cache = lstm_forward(params, seq, keep=True)
    return float(max(np.abs(u).max() for _, u in cache))


# --- ResNet-20 (CraterLake Table 3, Osiris Table III; basalt_workloads::resnet) -----------------
#
# Vectorised for one core: NHWC float32, each convolution one BLAS product of its im2col
# matrix (a strided view, copied once) with the kernel, and the adjoint scattered back by the
# k*k offsets. ResNet-20 is about 41 M multiply-adds per 32x32 image forward, so an epoch of
# the 1,347 training images is about 0.3 TFLOP with the backward pass.

# The shapes of ``basalt_workloads::resnet::Arch``: (side, base channels, blocks per stage).
RESNET20 = (32, 16, 3)
RESNET_TOY = (4, 4, 1)
RESNET_EPOCHS = {"resnet20": 10, "resnet_toy": 60}
# The encrypted ReLU is x (1 + sign(x)) / 2 with a composite minimax sign on [-1, 1]; every
# ReLU input is scaled to peak here on the training split, a margin for unseen images.
RELU_PEAK = 0.5
RESNET_LOGITS = 8.0


def resnet_images(x8: np.ndarray, side: int) -> np.ndarray:
    """[n,64] grey levels to [n, side, side, 3] float32 in [0, 1], as
    ``basalt_workloads::resnet::image``: 4x4 means (2x2 blocks) at side 4, else each pixel a
    (side/8)^2 block; the grey plane in all three channels."""
    img = x8.reshape(-1, 8, 8).astype(np.float32) / 16.0
    if side == 4:
        img = img.reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4))
    else:
        k = side // 8
        img = img.repeat(k, axis=1).repeat(k, axis=2)
    return np.ascontiguousarray(np.repeat(img[..., None], 3, axis=3))


def resnet_layers(shape) -> list[tuple[str, int, int, int, int]]:
    """(role, cin, cout, k, stride) of every convolution in ``Arch::run`` order: the stem, then
    per block conv1, conv2 and (first block of stages 2 and 3) the 1x1 stride-2 shortcut."""
    _, c0, blocks = shape
    out = [("stem", 3, c0, 3, 1)]
    for s in range(3):
        for b in range(blocks):
            down = s > 0 and b == 0
            cin, cout = c0 << (s - 1 if down else s), c0 << s
            out += [("conv1", cin, cout, 3, 2 if down else 1), ("conv2", cout, cout, 3, 1)]
            if down:
                out.append(("short", cin, cout, 1, 2))
    return out


def conv_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int):
    """[n,h,w,cin] * [k,k,cin,cout], zero padding k//2: ([n,ho,wo,cout], im2col matrix)."""
    k = w.shape[0]
    p = k // 2
    if p:
        x = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    n, h, wd, c = x.shape
    ho, wo = (h - k) // stride + 1, (wd - k) // stride + 1
    s0, s1, s2, s3 = x.strides
    view = np.lib.stride_tricks.as_strided(
        x, (n, ho, wo, k, k, c), (s0, s1 * stride, s2 * stride, s1, s2, s3), writeable=False)
    cols = view.reshape(n * ho * wo, k * k * c)
    y = cols @ w.reshape(k * k * c, -1)
    y += b
    return y.reshape(n, ho, wo, -1), cols


def conv_backward(g: np.ndarray, cols: np.ndarray, xshape, w: np.ndarray, stride: int,
                  need_x: bool = True):
    """Gradients (input, kernel, bias) of :func:`conv_forward` from the output's ``g``."""
    k, cout = w.shape[0], w.shape[3]
    p = k // 2
    n, ho, wo, _ = g.shape
    g2 = g.reshape(-1, cout)
    gw = (cols.T @ g2).reshape(w.shape)
    gb = g2.sum(0)
    if not need_x:
        return None, gw, gb
    gc = (g2 @ w.reshape(-1, cout).T).reshape(n, ho, wo, k, k, -1)
    _, h, wd, c = xshape
    gx = np.zeros((n, h + 2 * p, wd + 2 * p, c), np.float32)
    for di in range(k):
        for dj in range(k):
            gx[:, di:di + stride * (ho - 1) + 1:stride,
               dj:dj + stride * (wo - 1) + 1:stride] += gc[:, :, :, di, dj]
    return (gx[:, p:p + h, p:p + wd] if p else gx), gw, gb


def resnet_forward(params, x, shape, keep=False, relu_inputs=False):
    """Scores of ``Arch::run`` with the exact ReLU; with ``keep`` also the tape for
    :func:`resnet_backward` and every ReLU input in ``Arch::run`` order; with ``relu_inputs``
    the ReLU inputs alone."""
    layers = resnet_layers(shape)
    tape, pre = [], []

    def conv(i, h):
        y, cols = conv_forward(h, params[2 * i], params[2 * i + 1], layers[i][4])
        if keep:
            tape.append((cols, h.shape))
        return y

    a = conv(0, x)
    pre.append(a)
    h = np.maximum(a, 0)
    i = 1
    for s in range(3):
        for b in range(shape[2]):
            down = s > 0 and b == 0
            a1 = conv(i, h)
            y = conv(i + 1, np.maximum(a1, 0))
            short = conv(i + 2, h) if down else h
            i += 3 if down else 2
            z = y + short
            pre += [a1, z]
            h = np.maximum(z, 0)
    m = h.mean(axis=(1, 2))
    out = m @ params[-2].T + params[-1]
    if relu_inputs:
        return out, pre
    return (out, (tape, pre, h, m)) if keep else out


def resnet_backward(params, shape, cache, g):
    """Gradients of every parameter from the scores' gradient ``g``."""
    layers = resnet_layers(shape)
    tape, pre, h, m = cache
    grads = [None] * len(params)
    grads[-2], grads[-1] = g.T @ m, g.sum(0)
    r = h.shape[1]
    gh = np.broadcast_to((g @ params[-2])[:, None, None, :] / (r * r), h.shape)

    def back(i, gy, need_x=True):
        cols, xshape = tape[i]
        gx, grads[2 * i], grads[2 * i + 1] = conv_backward(
            gy, cols, xshape, params[2 * i], layers[i][4], need_x)
        return gx

    # Blocks in reverse: conv indices and ReLU inputs as the forward pass laid them down.
    blocks = []
    i = 1
    for s in range(3):
        for b in range(shape[2]):
            down = s > 0 and b == 0
            blocks.append((i, down))
            i += 3 if down else 2
    for k, (i, down) in reversed(list(enumerate(blocks))):
        a1, z = pre[1 + 2 * k], pre[2 + 2 * k]
        gz = gh * (z > 0)
        gshort = back(i + 2, gz) if down else gz
        ga1 = back(i + 1, gz) * (a1 > 0)
        gh = back(i, ga1) + gshort
    back(0, gh * (pre[0] > 0), need_x=False)
    return grads


def resnet_init(rng, shape):
    """He initialisation, without batch norm as in Fixup (Zhang et al., ICLR 2019): each
    block's second convolution and the classifier start at zero, each first convolution is
    scaled by (number of blocks)^-1/2, so every block starts as the identity."""
    layers = resnet_layers(shape)
    nblocks = 3 * shape[2]
    params = []
    for role, cin, cout, k, _ in layers:
        w = rng.normal(0.0, np.sqrt(2.0 / (cin * k * k)), (k, k, cin, cout))
        if role == "conv2":
            w *= 0.0
        elif role == "conv1":
            w /= np.sqrt(nblocks)
        params += [w.astype(np.float32), np.zeros(cout, np.float32)]
    c3 = shape[1] << 2
    params += [np.zeros((10, c3), np.float32), np.zeros(10, np.float32)]
    return params


def train_resnet(xtr, ytr, rng, shape, epochs, lr=2e-3, batch=32):
    """Adam with a cosine learning-rate decay, exact ReLU, no batch norm (module notes)."""
    params = resnet_init(rng, shape)
    opt = Adam(params, lr)
    steps = epochs * (len(ytr) // batch)
    t0 = time.time()
    for e in range(epochs):
        for idx in np.array_split(rng.permutation(len(ytr)), len(ytr) // batch):
            opt.lr = float(lr * 0.5 * (1 + np.cos(np.pi * opt.t / steps)))
            out, cache = resnet_forward(params, xtr[idx], shape, keep=True)
            g = softmax_grad(out.astype(np.float64), ytr[idx]).astype(np.float32)
            opt.step(resnet_backward(params, shape, cache, g))
        print(f"  epoch {e + 1}/{epochs}: {time.time() - t0:.0f} s", file=sys.stderr)
    return params


def resnet_relu_peaks(params, x, shape, chunk=64) -> np.ndarray:
    """Largest |ReLU input| of every ReLU (``Arch::run`` order) over ``x``."""
    peaks = None
    for at in range(0, len(x), chunk):
        _, pre = resnet_forward(params, x[at:at + chunk], shape, relu_inputs=True)
        p = np.array([np.abs(a).max() for a in pre])
        peaks = p if peaks is None else np.maximum(peaks, p)
    return peaks


def resnet_scores(params, x, shape, chunk=64) -> np.ndarray:
    return np.concatenate([resnet_forward(params, x[at:at + chunk], shape)
                           for at in range(0, len(x), chunk)])


def fold_resnet(params, x, shape, peak=RELU_PEAK) -> None:
    """Rescale the trained network so that every ReLU input peaks at ``peak`` on ``x``, the
    function unchanged (ReLU(k a) = k ReLU(a) for k > 0; what folding a batch norm's scale
    does): a trunk scale per stage (the residual sums of a stage add equal scales), a scale per
    block's inner ReLU, each convolution's weights times (output scale / input scale) and its
    bias times the output scale, the classifier divided by the last trunk scale."""
    layers = resnet_layers(shape)
    peaks = resnet_relu_peaks(params, x, shape)
    # ReLU k: 0 the stem (trunk of stage 0), then per block conv1 (inner), sum (trunk).
    trunk = [0.0, 0.0, 0.0]
    trunk[0] = peaks[0]
    inner = []
    for k in range(3 * shape[2]):
        s = k // shape[2]
        inner.append(peak / peaks[1 + 2 * k])
        trunk[s] = max(trunk[s], peaks[2 + 2 * k])
    trunk = [peak / t for t in trunk]
    i, k = 1, 0
    scale = [(1.0, trunk[0])]
    for s in range(3):
        for b in range(shape[2]):
            down = s > 0 and b == 0
            t_in = trunk[s - 1] if down else trunk[s]
            scale += [(t_in, inner[k]), (inner[k], trunk[s])]
            if down:
                scale.append((t_in, trunk[s]))
            k += 1
    assert len(scale) == len(layers)
    for i, (a_in, a_out) in enumerate(scale):
        params[2 * i] *= np.float32(a_out / a_in)
        params[2 * i + 1] *= np.float32(a_out)
    params[-2] /= np.float32(trunk[2])


def resnet_arrays(params) -> list[np.ndarray]:
    """In ``basalt_workloads::resnet``'s order and layout: each convolution [cout, cin, k, k]
    and its bias, then the classifier [10, c3] and its bias."""
    out = [a.transpose(3, 2, 0, 1) if a.ndim == 4 else a for a in params]
    return [a.astype(np.float64) for a in out]


def resnet_params(arrays) -> list[np.ndarray]:
    """The inverse of :func:`resnet_arrays` (float32, NHWC kernels)."""
    return [(a.transpose(2, 3, 1, 0) if a.ndim == 4 else a).astype(np.float32) for a in arrays]


LENET_EPOCHS = {"lenet": 5, "lenet_toy": 30}
LSTM_EPOCHS = {"lstm": 40, "lstm_toy": 40}
MODELS = ["mlp", "lola", "lenet", "lenet_toy", "lstm", "lstm_toy", "resnet20", "resnet_toy"]


def main() -> int:
    import argparse

    import sklearn

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated subset of {','.join(MODELS)} (default: all)")
    want = ap.parse_args().models.split(",")
    if unknown := set(want) - set(MODELS):
        ap.error(f"unknown models {sorted(unknown)}; known: {MODELS}")

    OUT.mkdir(parents=True, exist_ok=True)
    xtr, ytr, xte, yte = digits()
    blob = bytearray(b"BDIGITS1") + struct.pack("<HH", len(ytr), len(yte))
    for x, y in zip(np.concatenate([xtr, xte]), np.concatenate([ytr, yte])):
        blob += x.tobytes() + bytes([int(y)])
    (OUT / "digits.bin").write_bytes(bytes(blob))

    tr28, te28 = to28(xtr), to28(xte)
    prov = OUT / "provenance.json"
    record = json.loads(prov.read_text()) if prov.exists() else {"models": {}}
    record.update({
        "data": {
            "source": "sklearn.datasets.load_digits (UCI optical digits, BSD-3-Clause)",
            "shuffle_seed": SEED,
            "train": int(len(ytr)),
            "test": int(len(yte)),
            "resize_28": "3x3 blocks (24x24), 2 zero pixels of padding per side, /16",
            "resize_14": "2x2 blocks (16x16), outer ring cropped, /16",
        },
        "versions": {"numpy": np.__version__, "scikit-learn": sklearn.__version__},
    })
    # MLP and LoLa share one generator, in this order (their weights predate the others).
    rng = np.random.default_rng(SEED)
    if "mlp" in want or "lola" in want:
        mlp = train_mlp(tr28, ytr, rng)
        if "mlp" in want:
            bound_logits(mlp, mlp_forward(mlp, tr28))
            mlp = write_weights(OUT / "mlp.bin", mlp)
            acc = float((mlp_forward(mlp, te28).argmax(1) == yte).mean())
            record["models"]["mlp"] = {"epochs": 40, "optimizer": "Adam 2e-3, batch 64",
                                       "activation": "square",
                                       "logits_bounded_to": 16.0, "test_accuracy": acc}
            print(f"mlp: test accuracy {acc:.4f}", file=sys.stderr)
    if "lola" in want:
        lola = train_lola(patches(tr28), ytr, rng)
        bound_logits(lola, lola_forward(lola, patches(tr28)))
        lola = write_weights(OUT / "lola.bin", lola)
        acc = float((lola_forward(lola, patches(te28)).argmax(1) == yte).mean())
        record["models"]["lola"] = {"epochs": 40, "optimizer": "Adam 2e-3, batch 64",
                                    "activation": "square",
                                    "logits_bounded_to": 16.0, "test_accuracy": acc}
        print(f"lola: test accuracy {acc:.4f}", file=sys.stderr)

    # LeNet: Orion's on 28x28, and the toy shape of the --quick runs on the raw 8x8 images.
    for name, shape, to in [("lenet", LENET_ORION, to28),
                            ("lenet_toy", LENET_TOY, lambda x: x.reshape(-1, 64) / 16.0)]:
        if name not in want:
            continue
        rng = np.random.default_rng(SEED + 1)
        a, b = to(xtr), to(xte)
        params = train_lenet(a, ytr, rng, shape, LENET_EPOCHS[name])
        normalise_lenet(params, a, shape)
        bound_logits(params, lenet_forward(params, a, shape))
        params = write_weights(OUT / f"{name}.bin", params)
        acc = float((lenet_forward(params, b, shape).argmax(1) == yte).mean())
        side, ch, k, hidden = shape
        record["models"][name] = {
            "shape": f"{side}x{side}, conv {k}x{k} 1->{ch[0]} s2, conv {k}x{k} {ch[0]}->{ch[1]} "
                     f"s2, dense {ch[1] * (side // 4) ** 2}->{hidden}->10",
            "epochs": LENET_EPOCHS[name], "optimizer": "Adam 1e-3, batch 32",
            "activation": "square", "batch_norm": "none trained; each layer scaled to peak 1 "
            "on the training split, compensated by the next",
            "logits_bounded_to": 16.0, "test_accuracy": acc}
        print(f"{name}: test accuracy {acc:.4f}", file=sys.stderr)

    # LSTM: 28 steps of 28x28 rows at width 128; the toy: 8 steps of 8x8 rows at width 16.
    for name, side, width in [("lstm", 28, 128), ("lstm_toy", 8, 16)]:
        if name not in want:
            continue
        rng = np.random.default_rng(SEED + 2)
        a, b = lstm_sequences(xtr, side, width), lstm_sequences(xte, side, width)
        params = train_lstm(a, ytr, rng, LSTM_EPOCHS[name])
        bound_logits(params, lstm_forward(params, a))
        params = write_weights(OUT / f"{name}.bin", params)
        acc = float((lstm_forward(params, b).argmax(1) == yte).mean())
        record["models"][name] = {
            "shape": f"h <- sigma(W0 h + W1 x), {width} wide, {side} steps (one image row "
                     f"each, a constant 1 after the pixels), dense {width}->10 on the last state",
            "sigma": "degree-3 odd Chebyshev interpolant of tanh(2u) on [-1, 1] of u = z/2",
            "epochs": LSTM_EPOCHS[name], "optimizer": "Adam 3e-3, batch 32, BPTT",
            "max_pre_activation_train": lstm_max_pre(params, a) * LSTM_BOUND,
            "max_pre_activation_test": lstm_max_pre(params, b) * LSTM_BOUND,
            "logits_bounded_to": 16.0, "test_accuracy": acc}
        print(f"{name}: test accuracy {acc:.4f}", file=sys.stderr)

    # ResNet-20 on 32x32x3 (each pixel a 4x4 block, grey in all channels); the toy of the
    # --quick runs on 4x4x3 (2x2 means), 4/8/16 channels, one block per stage.
    for name, shape in [("resnet20", RESNET20), ("resnet_toy", RESNET_TOY)]:
        if name not in want:
            continue
        rng = np.random.default_rng(SEED + 3)
        a, b = resnet_images(xtr, shape[0]), resnet_images(xte, shape[0])
        params = train_resnet(a, ytr, rng, shape, RESNET_EPOCHS[name])
        fold_resnet(params, a, shape)
        k = RESNET_LOGITS / np.abs(resnet_scores(params, a, shape)).max()
        params[-2] *= np.float32(k)
        params[-1] *= np.float32(k)
        params = resnet_params(write_weights(OUT / f"{name}.bin", resnet_arrays(params)))
        acc = float((resnet_scores(params, b, shape).argmax(1) == yte).mean())
        side, c0, blocks = shape
        record["models"][name] = {
            "shape": f"{side}x{side}x3, ResNet-{6 * blocks + 2}: conv 3x3 3->{c0}, 3 stages x "
                     f"{blocks} blocks ({c0}/{2 * c0}/{4 * c0} channels), average pool, "
                     f"dense {4 * c0}->10",
            "epochs": RESNET_EPOCHS[name],
            "optimizer": "Adam 2e-3 with cosine decay, batch 32",
            "activation": "ReLU (the encrypted run: x (1 + sign(x)) / 2, composite minimax "
                          "sign on [-1, 1])",
            "batch_norm": "none trained (Fixup initialisation); every ReLU input scaled to "
                          f"peak at {RELU_PEAK} on the training split",
            "max_relu_input_train": float(resnet_relu_peaks(params, a, shape).max()),
            "max_relu_input_test": float(resnet_relu_peaks(params, b, shape).max()),
            "logits_bounded_to": RESNET_LOGITS, "test_accuracy": acc}
        print(f"{name}: test accuracy {acc:.4f} (exact ReLU)", file=sys.stderr)

    record["sha256"] = {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(OUT.glob("*.bin"))
    }
    prov.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
