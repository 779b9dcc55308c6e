"""Long operations from Python: memory estimates before keys exist, refusal beyond the memory
available, Ctrl-C between keys (CKKS evaluation keys, TFHE server keys), progress callbacks of
TFHE key generation, and the security estimate of every preset."""

import _thread
import threading
import time

import pytest

import basalt


def test_estimate_counts_keys_before_they_exist():
    e = basalt.ckks.estimate("OSIRIS_SET_I", rotations=[1, 2, 3], conjugate=True)
    assert e["keys"] == 5 and e["total"] > 5 * e["per_key"] > 0
    seeded = basalt.ckks.estimate("OSIRIS_SET_I", rotations=3, conjugate=True, seeded=True)
    assert seeded["per_key"] * 2 == e["per_key"]
    boot = basalt.ckks.estimate("CRATERLAKE_80_BOOT_UNPACKED", bootstrapping=True)
    assert boot["bootstrapping"] > 1 << 28  # the preset's 0.47 GB of bootstrapping keys
    with pytest.raises(basalt.BasaltError, match="rotations"):
        basalt.ckks.estimate("OSIRIS_SET_I", rotations=-1)
    with pytest.raises(basalt.BasaltError, match="no bootstrapping circuit"):
        basalt.ckks.estimate("MXV_SET_A", bootstrapping=True)


def test_keys_beyond_the_memory_available_are_refused():
    # levels=1000 (about 16 GB of relinearisation key) aborted the interpreter; whether 16 GB
    # fits depends on the machine, so the test asks for a size none has.
    # 4000 levels of one-prime digits at N = 2^10: about 250 GB per key, on any machine.
    with pytest.raises(basalt.BasaltError, match="needs about .* of memory"):
        basalt.ckks.Context.toy_insecure(log_n=10, levels=4000)


def test_ctrl_c_stops_key_generation_between_keys():
    rotations = list(range(1, 400))
    t0 = time.perf_counter()
    basalt.ckks.Context.toy_insecure(log_n=12, levels=6, rotations=rotations[:40])
    per_key = (time.perf_counter() - t0) / 41
    timer = threading.Timer(max(0.05, 5 * per_key), _thread.interrupt_main)
    start = time.perf_counter()
    finished = False
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            basalt.ckks.Context.toy_insecure(log_n=12, levels=6, rotations=rotations)
            finished = True
            time.sleep(5)  # finished before the interrupt: it arrives here instead
    finally:
        timer.cancel()
    assert not finished, "key generation ran to its end despite Ctrl-C"
    # Stopped well before the 400 keys were made.
    assert time.perf_counter() - start < 200 * per_key + 1.0


def test_tfhe_key_generation_reports_its_stages_and_a_raising_callback_stops_it():
    seen = []
    ctx = basalt.tfhe.Context("STRIX_I", allow_insecure=True,
                              progress=lambda stage, done, total: seen.append((stage, done, total)))
    stages = [s for s, _, _ in seen]
    assert stages[0] == "bootstrapping key" and "key-switching key" in stages
    for stage in set(stages):
        steps = [(d, t) for s, d, t in seen if s == stage]
        assert steps[-1][0] == steps[-1][1] > 0, stage  # every row done
        assert [d for d, _ in steps] == sorted({d for d, _ in steps}), stage
    assert ctx.decrypt(ctx.encrypt(1)) == 1

    class Stop(Exception):
        pass

    calls = []

    def stop(stage, done, total):
        calls.append(stage)
        raise Stop(stage)

    with pytest.raises(Stop, match="bootstrapping key"):
        basalt.tfhe.Context("STRIX_I", allow_insecure=True, progress=stop)
    assert calls == ["bootstrapping key"]  # nothing ran after the first report


def test_ctrl_c_stops_tfhe_key_generation():
    # The 2+2-bit set's server key (about 120 MB) is made in dozens of steps; an interrupt a
    # quarter of the way through lands inside key generation, which stops there.
    t0 = time.perf_counter()
    basalt.tfhe.Context("TFHERS_2_2_KS_PBS")
    full = time.perf_counter() - t0
    timer = threading.Timer(full / 4, _thread.interrupt_main)
    finished = False
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            basalt.tfhe.Context("TFHERS_2_2_KS_PBS")
            finished = True
            time.sleep(5)  # finished before the interrupt: it arrives here instead
    finally:
        timer.cancel()
    assert not finished, "key generation ran to its end despite Ctrl-C"


def test_presets_report_their_security_estimate():
    # The small presets (every preset: `basalt.ckks.presets(security=True)`, a minute or more).
    for name in ("OSIRIS_SET_I", "MXV_SET_A", "CRATERLAKE_MNIST"):
        sec = basalt.ckks.security(name)
        assert sec["bits"] > 0 and sec["log_qp"] > 0, name
        assert sec["meets"] in (None, 128, 192, 256), name
    assert basalt.ckks.security("OSIRIS_SET_I")["meets"] in (128, 192)  # log QP 280 at 2^14
    assert basalt.ckks.security("CRATERLAKE_MNIST")["claimed"] == 80
