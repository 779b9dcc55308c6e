"""Per-role keys of basalt.distributed without a cluster (toy rings): keys written one file per
key and loaded by role, the client freeing its own keys, and the key-size API's prediction
for each role of FAB-2's training."""

import json

import numpy as np
import pytest

import basalt
import basalt.distributed as bd
import basalt.helr


@pytest.fixture(scope="module")
def toy():
    """A client with rotations 1, 3 and -2 and conjugation, its keys written one per file."""
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1, 3, -2],
                                           conjugate=True)
    return ctx, ctx.evaluation_keys(conjugate=True)


def test_key_files_load_by_role_and_compute_as_the_whole_set(toy, tmp_path):
    ctx, keys = toy
    params = ctx.parameters
    files = bd.save_keys(params, keys, tmp_path)
    manifest = json.loads((tmp_path / "keys.json").read_text())
    assert manifest["key_id"] == ctx.key_id
    assert sorted(e["kind"] for e in manifest["keys"]) == \
        ["conjugation", "relinearization", "rotation", "rotation", "rotation"]
    secret = ctx.export_secret_key()[-512:]
    for p in tmp_path.iterdir():
        assert secret not in p.read_bytes(), f"secret-key bytes in {p.name}"

    whole = basalt.ckks.Server(params, keys)
    part = bd._CkksWorker(params.to_json(), files.select([3]), False).server
    assert part.rotations == [3] and not part.can_bootstrap
    assert part.key_id == ctx.key_id
    ct = ctx.encrypt(np.linspace(-1, 1, 16))
    a = whole.ciphertext_from_bytes(ct.to_bytes())
    b = part.ciphertext_from_bytes(ct.to_bytes())
    assert (b * b).rescale().rotate(3).to_bytes() == (a * a).rescale().rotate(3).to_bytes()
    with pytest.raises(basalt.BasaltError, match="rotation by 1"):
        b.rotate(1)
    # Steps are matched by Galois element: -2 is the file of slots - 2.
    slots = ctx.slots
    assert bd._CkksWorker(params.to_json(), files.select([slots - 2]), False) \
        .server.rotations == [slots - 2]
    assert files.select([1, 3]).size_bytes(params) < files.size_bytes(params)


def test_key_files_refuse_what_is_missing_or_broken(toy, tmp_path):
    ctx, keys = toy
    params = ctx.parameters
    files = bd.save_keys(params, keys, tmp_path)
    with pytest.raises(basalt.BasaltError, match="rotation by 5"):
        files.select([5]).files(params)
    victim = next(p for p in tmp_path.iterdir() if p.name.startswith("rotation_"))
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 1
    victim.write_bytes(bytes(data))
    with pytest.raises(basalt.BasaltError, match=victim.name):
        bd._CkksWorker(params.to_json(), files, False)
    with pytest.raises(basalt.BasaltError, match="not a key directory"):
        bd.KeyFiles(tmp_path / "nowhere")
    other = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1])
    mixed = tmp_path / "mixed"
    bd.save_keys(params, keys, mixed)
    other.evaluation_keys().relinearization.save(mixed / "relinearization.key")
    with pytest.raises(basalt.BasaltError):
        bd._CkksWorker(params.to_json(), bd.KeyFiles(mixed), False)


def test_a_client_frees_its_keys_and_makes_them_again():
    ctx = basalt.ckks.Context.toy_bootstrappable(log_n=10, log_slots=3, rotations=[1])
    kept = ctx.evaluation_keys()
    ct = ctx.encrypt(np.full(8, 0.25), level=0)
    ctx.drop_evaluation_keys()
    assert ctx.can_bootstrap and ctx.bootstrap_input_scale > 0
    with pytest.raises(basalt.BasaltError):
        ctx.bootstrap(ct)
    with pytest.raises(basalt.BasaltError):
        ct.rotate(1)
    again = ctx.evaluation_keys()
    assert again.key_id == kept.key_id == ctx.key_id
    assert again.rotations == kept.rotations and again.has_bootstrapping
    server = basalt.ckks.Server(ctx.parameters, again)
    out = server.bootstrap(server.ciphertext_from_bytes(ct.to_bytes()))
    back = ctx.decrypt(ctx.ciphertext_from_bytes(out.to_bytes())).real
    assert np.abs(back - 0.25).max() < 1e-3


def test_role_memory_at_full_size_needs_no_key():
    # FAB's N = 2^16 ring; a sparse 8-slot circuit keeps the shape quick to build (all 2^15
    # slots take seconds more: scripts/distributed_scaling.py --roles-only).
    task = basalt.helr.Task("quick")
    r = bd.helr_role_memory(task, preset="FAB", log_slots=3)
    assert r["log_n"] == 16 and r["slots"] == 8
    assert r["per_key"] == 2 * r["per_key_seeded"] == 3 * 2 * 32 * 2**16 * 8  # dnum 3, 24+8 limbs
    assert r["gradient_keys"] == 1 + r["task_rotations"]
    assert r["update_keys"] == 2 + r["task_rotations"] + r["circuit_rotations"] \
        - r["shared_rotations"]
    assert r["gradient_key_bytes"] < r["update_key_bytes"]
    assert r["circuit_plaintext_bytes"] > 0


@pytest.fixture(scope="module")
def boot_toy():
    """A client that bootstraps (toy ring, sparse ephemeral secret), with rotation 1."""
    ctx = basalt.ckks.Context.toy_bootstrappable(log_n=10, log_slots=3, rotations=[1])
    return ctx, ctx.evaluation_keys()


def test_a_bootstrapping_selection_of_files_serves_a_server_that_bootstraps(boot_toy, tmp_path):
    ctx, keys = boot_toy
    params = ctx.parameters
    files = bd.save_keys(params, keys, tmp_path)
    sel = files.select([1], bootstrapping=True)
    # The same keys as the in-memory selection: the circuit's rotations, the conjugation key
    # and the encapsulation keys besides the program's rotation.
    whole = keys.select([1], bootstrapping=True)
    assert set(whole.rotations) > {1} and whole.has_conjugation and whole.has_bootstrapping
    kinds = [k for k, _ in sel.files(params)]
    assert kinds.count("rotation") == len(whole.rotations)
    assert kinds.count("conjugation") == 1 and kinds.count("bootstrapping") == 1
    assert bd._bootstraps(params, sel) and not bd._bootstraps(params, files.select([1]))
    server = bd._CkksWorker(params.to_json(), sel, bd._bootstraps(params, sel)).server
    assert server.can_bootstrap and sorted(server.rotations) == sorted(whole.rotations)
    x = np.linspace(-0.5, 0.5, 8)
    ct = ctx.encrypt(x, level=0).to_bytes()
    out = server.bootstrap(server.ciphertext_from_bytes(ct))
    # Bit for bit what a server of the in-memory selection computes, and the right values.
    ref = basalt.ckks.Server(params, whole)
    assert out.to_bytes() == ref.bootstrap(ref.ciphertext_from_bytes(ct)).to_bytes()
    back = ctx.decrypt(ctx.ciphertext_from_bytes(out.to_bytes())).real
    assert np.abs(back - x).max() < 1e-3
    # A selection without bootstrapping goes without the circuit and says so when asked.
    plain = bd._CkksWorker(params.to_json(), files.select([1]), False).server
    assert not plain.can_bootstrap
    with pytest.raises(basalt.BasaltError):
        plain.bootstrap(plain.ciphertext_from_bytes(ct))


def test_a_bootstrapping_selection_names_the_circuit_keys_it_lacks(boot_toy, tmp_path):
    ctx, keys = boot_toy
    params = ctx.parameters
    # Keys made without the circuit's: no encapsulation keys, none of its rotations.
    bare = bd.save_keys(params, ctx.evaluation_keys(rotations=[1], conjugate=True,
                                                              bootstrapping=False),
                        tmp_path / "bare")
    bare.select([1]).files(params)  # what a non-bootstrapping worker loads is all there
    with pytest.raises(basalt.BasaltError, match="which the bootstrapping circuit needs"):
        bare.select([1], bootstrapping=True).files(params)
    with pytest.raises(basalt.BasaltError, match="bootstrapping circuit needs"):
        bd._CkksWorker(params.to_json(), bare.select([1], bootstrapping=True), True)
    # Every rotation key there but the encapsulation keys missing: named as such.
    full = tmp_path / "full"
    bd.save_keys(params, keys, full)
    manifest = json.loads((full / "keys.json").read_text())
    manifest["keys"] = [e for e in manifest["keys"] if e["kind"] != "bootstrapping"]
    (full / "keys.json").write_text(json.dumps(manifest))
    with pytest.raises(basalt.BasaltError, match="no bootstrapping keys"):
        bd.KeyFiles(full).select([1], bootstrapping=True).files(params)
    # One circuit rotation missing: named as the circuit's.
    step = next(k for k in keys.select([], bootstrapping=True).rotations if k != 1)
    g = keys.rotation(step).galois_element
    manifest["keys"] = [e for e in manifest["keys"] if e.get("galois_element") != g]
    (full / "keys.json").write_text(json.dumps(manifest))
    with pytest.raises(basalt.BasaltError, match="rotation by -?[0-9]+, which the bootstrapping"):
        bd.KeyFiles(full).files(params)


def test_key_files_without_a_conjugation_key_load_whole(tmp_path):
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2, rotations=[1])
    params = ctx.parameters
    files = bd.save_keys(params, ctx.evaluation_keys(), tmp_path)
    assert [k for k, _ in files.files(params)] == ["relinearization", "rotation"]
    assert bd._CkksWorker(params.to_json(), files, False).server.rotations == [1]
    with pytest.raises(basalt.BasaltError, match="no conjugation key"):
        files.select([1], conjugate=True).files(params)
