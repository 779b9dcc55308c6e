"""CKKS keys as objects (public, relinearisation, one rotation step, conjugation, the
bootstrapping encapsulation keys): bytes and files, validation on load, assembly into a server's
key set; a LinearTransform on a server holding just its rotation keys; progress callbacks and
cancellation of key generation, bootstrapping and batches."""

import _thread
import gc
import threading
import time

import numpy as np
import pytest

import basalt
from basalt.ckks import (BootstrappingKeys, ConjugationKey, Context, EvaluationKeys,
                         LinearTransform, Parameters, PublicKey, RelinearizationKey, RotationKey,
                         Server)


@pytest.fixture(scope="module")
def ctx():
    return Context.toy_insecure(log_n=10, levels=3, rotations=[1, 2, 5], conjugate=True)


@pytest.fixture(scope="module")
def boot_ctx():
    return Context.toy_bootstrappable(log_n=10, log_slots=3)


def test_every_key_is_an_object_that_round_trips(ctx, tmp_path):
    p = ctx.parameters
    keys = ctx.evaluation_keys(rotations=[1, 2, 5], conjugate=True)
    objs = {"public": ctx.public_key(), "relin": keys.relinearization,
            "rot5": keys.rotation(5), "conj": keys.conjugation}
    assert isinstance(objs["public"], PublicKey)
    assert isinstance(objs["relin"], RelinearizationKey)
    assert isinstance(objs["rot5"], RotationKey) and objs["rot5"].step == 5
    assert isinstance(objs["conj"], ConjugationKey)
    for name, k in objs.items():
        assert k.key_id == ctx.key_id, name
        data = k.to_bytes()
        back = type(k).from_bytes(p, data)
        assert back.to_bytes() == data, name
        k.save(tmp_path / f"{name}.key")
        assert type(k).load(p, tmp_path / f"{name}.key").to_bytes() == data, name
        # A flipped bit, a truncation, or the bytes of another kind of key: refused.
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 4
        for junk in (bytes(bad), data[:-7], b""):
            with pytest.raises(basalt.BasaltError):
                type(k).from_bytes(p, junk)
    with pytest.raises(basalt.BasaltError, match="not a rotation key|Galois"):
        RotationKey.from_bytes(p, objs["relin"].to_bytes())
    with pytest.raises(basalt.BasaltError, match="not a conjugation key"):
        ConjugationKey.from_bytes(p, objs["rot5"].to_bytes())
    with pytest.raises(basalt.BasaltError, match="not a relinearization key"):
        RelinearizationKey.from_bytes(p, objs["rot5"].to_bytes())
    with pytest.raises(basalt.BasaltError, match="rotation"):
        keys.rotation(3)  # not held
    other = Context.toy_insecure(log_n=11, levels=3)
    with pytest.raises(basalt.BasaltError):
        RotationKey.from_bytes(other.parameters, objs["rot5"].to_bytes())  # other parameters
    # Seeded keys stay seeded as objects and in bytes (about half), and still compute.
    seeded = ctx.evaluation_keys(rotations=[5], seeded=True).rotation(5)
    assert seeded.seeded and not objs["rot5"].seeded
    data = seeded.to_bytes()
    assert len(data) < 0.6 * len(objs["rot5"].to_bytes())
    back = RotationKey.from_bytes(p, data)
    assert back.seeded and back.to_bytes() == data
    server = Server(p, EvaluationKeys.assemble(p, [keys.relinearization, back]))
    x = np.linspace(-1, 1, 8)
    out = server.ciphertext_from_bytes(ctx.encrypt(x).to_bytes()).rotate(5)
    assert np.allclose(ctx.decrypt(ctx.ciphertext_from_bytes(out.to_bytes())).real,
                       np.roll(x, -5), atol=1e-4)


def test_a_server_built_from_single_keys_computes(ctx):
    p = ctx.parameters
    keys = ctx.evaluation_keys(rotations=[1, 2, 5], conjugate=True)
    files = {getattr(k, "step", type(k).__name__): (type(k), k.to_bytes()) for k in keys.keys()}
    # The server loads the relinearisation key and the rotation by 2 only.
    chosen = [files["RelinearizationKey"], files[2]]
    some = EvaluationKeys.assemble(p, [cls.from_bytes(p, b) for cls, b in chosen])
    assert some.rotations == [2] and not some.has_conjugation
    server = Server(p, some)
    assert server.name == ctx.name == p.name  # one definition, through the parameters
    assert server.parameters.to_json() == p.to_json()
    x = np.linspace(-1, 1, 8)
    ct = server.ciphertext_from_bytes(ctx.encrypt(x).to_bytes())
    out = ((ct * ct).rescale()).rotate(2)
    got = ctx.decrypt(ctx.ciphertext_from_bytes(out.to_bytes())).real
    assert np.allclose(got, np.roll(x * x, -2), atol=1e-3)
    with pytest.raises(basalt.BasaltError, match="missing rotation key for rotation by 1 "):
        ct.rotate(1)  # its key was not loaded
    # Keys of another key set do not mix.
    stranger = Context.toy_insecure(log_n=10, levels=3, rotations=[1])
    theirs = stranger.evaluation_keys(rotations=[1]).rotation(1)
    with pytest.raises(basalt.BasaltError, match="key identity mismatch") as e:
        EvaluationKeys.assemble(p, [keys.relinearization, theirs])
    assert ctx.key_id in str(e.value) and stranger.key_id in str(e.value)
    with pytest.raises(basalt.BasaltError, match="evaluation keys"):
        EvaluationKeys.assemble(p, [ctx.public_key()])


def test_bootstrapping_keys_are_an_object(boot_ctx, tmp_path):
    p = boot_ctx.parameters
    keys = boot_ctx.evaluation_keys()
    bk = keys.bootstrapping
    assert isinstance(bk, BootstrappingKeys) and bk.key_id == boot_ctx.key_id
    data = bk.to_bytes()
    assert BootstrappingKeys.from_bytes(p, data).to_bytes() == data
    with pytest.raises(basalt.BasaltError):
        BootstrappingKeys.from_bytes(p, data[:-3])
    # The circuit's keys, one object each, give a server that bootstraps.
    steps = boot_ctx.bootstrap_rotations
    assert steps and set(steps) <= set(keys.rotations)
    parts = [keys.relinearization, keys.conjugation, bk] + [keys.rotation(k) for k in steps]
    for i, k in enumerate(parts):
        k.save(tmp_path / f"{i}.key")
    loaded = [type(k).load(p, tmp_path / f"{i}.key") for i, k in enumerate(parts)]
    server = Server(p, EvaluationKeys.assemble(p, loaded))
    assert server.can_bootstrap
    x = np.linspace(-0.5, 0.5, 8)
    ct = server.ciphertext_from_bytes(boot_ctx.encrypt(x, level=0).to_bytes())
    out = boot_ctx.ciphertext_from_bytes(server.bootstrap(ct).to_bytes())
    assert np.abs(boot_ctx.decrypt(out).real - x).max() < 1e-3
    plain = Context.toy_insecure(log_n=10, levels=2).parameters
    with pytest.raises(basalt.BasaltError, match="do not bootstrap"):
        BootstrappingKeys.from_bytes(plain, data)


def test_linear_transform_on_a_server_with_only_its_rotations():
    client = Context.toy_insecure(log_n=10, levels=2)
    m = np.arange(64.0).reshape(8, 8) / 64
    lt = LinearTransform(client, m, n1=4)
    data = client.evaluation_keys(rotations=range(1, 8)).to_bytes()
    keys = EvaluationKeys.from_bytes(client.parameters, data, rotations=lt.rotations)
    assert keys.rotations == sorted(k for k in set(lt.rotations) if k % 8)
    server = Server(client.parameters, keys)
    x = np.linspace(-1, 1, 8)
    ct = server.ciphertext_from_bytes(client.encrypt(x).to_bytes())
    out = client.ciphertext_from_bytes(lt(ct).to_bytes())
    assert np.allclose(client.decrypt(out).real, m @ x, atol=1e-4)
    # Built on the server too, from the same matrix: the same product.
    lt2 = LinearTransform(server, m, n1=4)
    assert np.allclose(client.decrypt(client.ciphertext_from_bytes(lt2(ct).to_bytes())).real,
                       m @ x, atol=1e-4)
    other = Context.toy_insecure(log_n=11, levels=2)
    with pytest.raises(basalt.BasaltError, match="another parameter set"):
        lt(other.encrypt(x))


def test_selective_loading_keeps_the_conjugation_key_only_when_present(ctx):
    p = ctx.parameters
    with_conj = ctx.evaluation_keys(rotations=[1, 2], conjugate=True).to_bytes()
    without = ctx.evaluation_keys(rotations=[1, 2]).to_bytes()
    for rot in (None, [2]):
        assert EvaluationKeys.from_bytes(p, with_conj, rotations=rot).has_conjugation
        assert not EvaluationKeys.from_bytes(p, with_conj, rotations=rot,
                                             conjugate=False).has_conjugation
        assert EvaluationKeys.from_bytes(p, with_conj, rotations=rot,
                                         conjugate=True).has_conjugation
        kept = EvaluationKeys.from_bytes(p, without, rotations=rot)
        assert not kept.has_conjugation and 2 in kept.rotations
        with pytest.raises(basalt.BasaltError, match="missing conjugation key"):
            EvaluationKeys.from_bytes(p, without, rotations=rot, conjugate=True)
    # A missing rotation is still an error, whatever the conjugation choice.
    with pytest.raises(basalt.BasaltError, match="rotation"):
        EvaluationKeys.from_bytes(p, without, rotations=[3])


def test_progress_callbacks_report_key_generation_bootstrap_and_batches(boot_ctx):
    seen = []
    ctx = Context.toy_insecure(log_n=10, levels=2, rotations=[1, 2, 3],
                               progress=lambda *a: seen.append(a))
    assert seen and seen[-1][1] == seen[-1][2] >= 4  # relinearisation + 3 rotations
    seen.clear()
    ctx.add_rotations([4], progress=lambda *a: seen.append(a))
    assert seen and seen[-1][1] == seen[-1][2]
    seen.clear()
    ctx.evaluation_keys(rotations=[5], progress=lambda *a: seen.append(a))
    assert seen and seen[-1][1] == seen[-1][2] == 2

    x = np.full(4, 0.5)
    cts = [ctx.encrypt(x) for _ in range(20)]
    for name, run in (("mul_batch", lambda cb: ctx.mul_batch([(c, c) for c in cts], progress=cb)),
                      ("rotate_batch", lambda cb: ctx.rotate_batch(cts, 1, progress=cb)),
                      ("rescale_batch", lambda cb: ctx.rescale_batch(cts, progress=cb))):
        seen.clear()
        out = run(lambda *a: seen.append(a))
        assert len(out) == 20 and seen[-1] == (name, 20, 20), name
        assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)

    seen.clear()
    ct = boot_ctx.encrypt(np.linspace(-0.5, 0.5, 8), level=0)
    out = boot_ctx.bootstrap(ct, progress=lambda *a: seen.append(a))
    assert [(s, d, t) for s, d, t in seen] == [("bootstrap", i, 5) for i in range(1, 6)]
    assert np.abs(boot_ctx.decrypt(out).real - np.linspace(-0.5, 0.5, 8)).max() < 1e-3

    def stop(stage, done, total):
        if done >= 2:
            raise RuntimeError(f"stopped at {stage} {done}")

    with pytest.raises(RuntimeError, match="stopped at bootstrap 2"):
        ct.bootstrap(progress=stop)
    with pytest.raises(RuntimeError, match="stopped at"):
        Context.toy_insecure(log_n=10, levels=2, rotations=[1, 2, 3], progress=stop)


def test_a_bootstrapping_client_makes_one_relinearisation_key(tmp_path):
    """The circuit's relinearisation key is the program's too: key generation makes the
    program's rotation only, then the circuit's keys; a server from the saved keys multiplies
    and bootstraps bit for bit as the client does."""
    seen = []
    ctx = Context.toy_bootstrappable(log_n=10, log_slots=3, rotations=[1],
                                     progress=lambda *a: seen.append(a))
    totals = {stage: total for stage, _, total in seen}
    assert totals["key generation"] == 1, seen  # the rotation; no relinearisation key
    assert totals["bootstrapping keys"] > 1, seen
    keys = ctx.evaluation_keys()
    keys.save(tmp_path / "keys.bin")
    loaded = EvaluationKeys.load(ctx.parameters, tmp_path / "keys.bin", conjugate=True)
    server = Server(ctx.parameters, loaded)
    x = np.linspace(-0.5, 0.5, 8)
    data = ctx.encrypt(x, level=0).to_bytes()
    mine = ctx.ciphertext_from_bytes(data).bootstrap()
    theirs = server.bootstrap(server.ciphertext_from_bytes(data))
    assert mine.to_bytes() == theirs.to_bytes()
    assert np.abs(ctx.decrypt(mine).real - x).max() < 1e-3
    # A product after the bootstrap, relinearised with the one key on both sides.
    mine, theirs = (mine * mine.rotate(1)).rescale(), (theirs * theirs.rotate(1)).rescale()
    assert mine.to_bytes() == theirs.to_bytes()
    assert np.abs(ctx.decrypt(mine).real - x * np.roll(x, -1)).max() < 1e-3


def test_saved_bootstrapping_keys_load_whole_by_default(boot_ctx, tmp_path):
    """`EvaluationKeys.load` with no options keeps what was saved, the conjugation key the
    bootstrapping circuit needs included, as `from_bytes` does; dropping it takes an
    explicit ``conjugate=False``."""
    keys = boot_ctx.evaluation_keys()
    assert keys.has_conjugation and keys.has_bootstrapping
    keys.save(tmp_path / "keys.bin")
    p = boot_ctx.parameters
    loaded = EvaluationKeys.load(p, tmp_path / "keys.bin")
    assert loaded.has_conjugation and loaded.has_bootstrapping
    assert loaded.to_bytes() == EvaluationKeys.from_bytes(p, keys.to_bytes()).to_bytes()
    server = Server(p, loaded)
    assert server.can_bootstrap
    x = np.linspace(-0.5, 0.5, 8)
    ct = server.ciphertext_from_bytes(boot_ctx.encrypt(x, level=0).to_bytes())
    out = boot_ctx.ciphertext_from_bytes(server.bootstrap(ct).to_bytes())
    assert np.abs(boot_ctx.decrypt(out).real - x).max() < 1e-3
    assert not EvaluationKeys.load(p, tmp_path / "keys.bin", conjugate=False).has_conjugation


def test_ctrl_c_stops_a_batch():
    ctx = Context.toy_insecure(log_n=11, levels=3, rotations=[1])
    cts = [ctx.encrypt(np.ones(8))] * 2000
    timer = threading.Timer(0.2, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ctx.rotate_batch(cts, 1)
            time.sleep(30)  # finished before the interrupt: it arrives here instead
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 30


def test_one_bootstrapping_circuit_serves_the_client_and_its_servers():
    encoded = basalt._basalt._ckks_circuits_encoded
    before = encoded()
    # residual_levels=3: parameters no other test of this module holds a circuit for.
    client = Context.toy_bootstrappable(log_n=10, log_slots=3, residual_levels=3)
    assert encoded() == before + 1
    data = client.evaluation_keys().to_bytes()
    params = Parameters.from_json(client.parameters.to_json())
    keys = EvaluationKeys.from_bytes(params, data)
    # The second loads only the circuit's keys: the circuit's shape names them.
    servers = [Server(params, keys), Server(client.parameters, EvaluationKeys.from_bytes(
        client.parameters, data, rotations=[]))]
    assert encoded() == before + 1  # loading the keys and building two servers: no new one
    x = np.linspace(-0.5, 0.5, 8)
    for server in servers:
        ct = server.ciphertext_from_bytes(client.encrypt(x, level=0).to_bytes())
        out = client.ciphertext_from_bytes(server.bootstrap(ct).to_bytes())
        assert np.abs(client.decrypt(out).real - x).max() < 1e-3
    # The circuit goes with the last engine that holds it: a server built after is encoded anew.
    del client, servers, server, ct, out  # a ciphertext holds its engine
    gc.collect()
    assert Server(params, keys).can_bootstrap
    assert encoded() == before + 2


def test_select_drops_the_bootstrapping_keys_unless_asked(boot_ctx):
    keys = boot_ctx.evaluation_keys()
    circuit = boot_ctx.bootstrap_rotations
    assert keys.has_bootstrapping
    some = keys.select([1])
    assert some.rotations == [1] and not some.has_bootstrapping and not some.has_conjugation
    server = Server(boot_ctx.parameters, some)
    assert not server.can_bootstrap and server.parameters.can_bootstrap
    assert server.name == boot_ctx.name == boot_ctx.parameters.name
    with pytest.raises(basalt.BasaltError, match="no bootstrapping keys"):
        server.bootstrap(server.ciphertext_from_bytes(boot_ctx.encrypt(np.zeros(8),
                                                                       level=0).to_bytes()))
    full = keys.select([1], bootstrapping=True)
    assert full.has_bootstrapping and full.has_conjugation
    assert set(full.rotations) == set(circuit) | {1}
    server = Server(boot_ctx.parameters, full)
    x = np.linspace(-0.5, 0.5, 8)
    ct = server.ciphertext_from_bytes(boot_ctx.encrypt(x, level=0).to_bytes())
    out = boot_ctx.ciphertext_from_bytes(server.bootstrap(ct).rotate(1).to_bytes())
    assert np.abs(boot_ctx.decrypt(out).real - np.roll(x, -1)).max() < 1e-3
    # Asking for what is not there names it.
    with pytest.raises(basalt.BasaltError, match="no bootstrapping keys"):
        some.select([1], bootstrapping=True)
    with pytest.raises(basalt.BasaltError, match="do not bootstrap"):
        Context.toy_insecure(log_n=10, levels=2).evaluation_keys().select([], bootstrapping=True)


def test_a_missing_bootstrapping_key_is_named(boot_ctx):
    keys = boot_ctx.evaluation_keys()
    p = boot_ctx.parameters
    x = np.linspace(-0.5, 0.5, 8)
    # Every key but one rotation of the circuit: the bootstrap names the rotation it lacks.
    step = boot_ctx.bootstrap_rotations[-1]
    parts = [k for k in keys.keys() if getattr(k, "step", None) != step]
    server = Server(p, EvaluationKeys.assemble(p, parts))
    ct = server.ciphertext_from_bytes(boot_ctx.encrypt(x, level=0).to_bytes())
    with pytest.raises(basalt.BasaltError, match=f"missing rotation key for rotation by {step} "):
        server.bootstrap(ct)
    # Without the conjugation key.
    parts = [k for k in keys.keys() if not isinstance(k, ConjugationKey)]
    server = Server(p, EvaluationKeys.assemble(p, parts))
    with pytest.raises(basalt.BasaltError, match="missing conjugation key"):
        server.bootstrap(server.ciphertext_from_bytes(ct.to_bytes()))
    # Without the encapsulation keys the server has no circuit, and says why.
    parts = [k for k in keys.keys() if not isinstance(k, BootstrappingKeys)]
    server = Server(p, EvaluationKeys.assemble(p, parts))
    assert not server.can_bootstrap
    with pytest.raises(basalt.BasaltError, match="encapsulation keys"):
        server.bootstrap(server.ciphertext_from_bytes(ct.to_bytes()))


def test_keys_and_parameters_keep_their_public_module(tmp_path):
    # They are defined in basalt.ckks_keys; pickles, reprs and doctest name the public module.
    import doctest
    import pickle

    from basalt import distributed as bd
    for cls in (Parameters, PublicKey, RelinearizationKey, RotationKey, ConjugationKey,
                BootstrappingKeys, EvaluationKeys):
        assert cls.__module__ == "basalt.ckks", cls
        assert getattr(basalt.ckks, cls.__name__) is cls
    assert bd.KeyFiles.__module__ == "basalt.distributed"
    ctx = Context.toy_insecure(log_n=10, levels=2, rotations=[1])
    data = pickle.dumps(ctx.parameters)
    assert b"basalt.ckks" in data and b"ckks_keys" not in data
    assert pickle.loads(data).to_json() == ctx.parameters.to_json()
    files = bd.save_keys(ctx.parameters, ctx.evaluation_keys(), tmp_path).select([1])
    data = pickle.dumps(files)
    assert b"basalt.distributed" in data and b"ckks_keys" not in data
    assert repr(pickle.loads(data)) == repr(files)
    # The moved classes' examples are still collected, once, under basalt.ckks.
    found = {t.name for t in doctest.DocTestFinder().find(basalt.ckks) if t.examples}
    assert {"basalt.ckks.EvaluationKeys", "basalt.ckks.EvaluationKeys.select",
            "basalt.ckks.EvaluationKeys.assemble"} <= found
    from basalt import ckks_keys
    assert not [t for t in doctest.DocTestFinder().find(ckks_keys) if t.examples]
