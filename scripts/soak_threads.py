"""Soak: 8 Python threads share one CKKS context (keys, evaluator) and each runs encrypt →
multiply → rotate → add → decrypt on its own data many times; every result is checked against
numpy. Fails on a wrong value, an exception or a crash. `python scripts/soak_threads.py [ROUNDS]`."""

import sys
import threading

import numpy as np

import basalt

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
THREADS = 8


def main() -> None:
    ctx = basalt.ckks.Context.toy_insecure(log_n=11, levels=3, rotations=[1, 3])
    n = ctx.slots
    errors: list = []
    worst = [0.0] * THREADS

    def work(t: int) -> None:
        rng = np.random.default_rng(1000 + t)
        try:
            for _ in range(ROUNDS):
                a = rng.uniform(-1, 1, n)
                b = rng.uniform(-1, 1, n)
                ca, cb = ctx.encrypt(a), ctx.encrypt(b)
                r = ((ca * cb).rescale().rotate(1) + (ca * cb).rescale()).rotate(3)
                want = np.roll(np.roll(a * b, -1) + a * b, -3)
                have = np.real(ctx.decrypt(r))[:n]
                err = float(np.max(np.abs(have - want)))
                worst[t] = max(worst[t], err)
                if err > 1e-4:
                    errors.append(f"thread {t}: max error {err:.3e}")
                    return
        except Exception as e:  # reported below
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    print(f"{THREADS} threads x {ROUNDS} rounds, worst error {max(worst):.3e}")
    if errors:
        sys.exit("\n".join(errors))


if __name__ == "__main__":
    main()
