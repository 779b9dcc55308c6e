"""TFHE from Python: every message through several lookup tables (exhaustive), batching, gates,
and bad input."""

import pytest

import basalt
from basalt.tfhe import Context


@pytest.fixture(scope="module")
def ctx():
    # Strix set I (TFHE-lib's 2016 set, ~80-bit): small and fast, hence insecure by name.
    return Context("STRIX_I", allow_insecure=True)


def test_every_message_through_several_tables(ctx):
    p = ctx.plaintext_modulus
    for f in (lambda m: m, lambda m: (m + 1) % p, lambda m: (m * m) % p, lambda m: p - 1 - m):
        for m in range(p):
            assert ctx.decrypt(ctx.apply(ctx.encrypt(m), f)) == f(m)


def test_batch_equals_one_by_one(ctx):
    p = ctx.plaintext_modulus
    cts = [ctx.encrypt(m % p) for m in range(2 * p)]
    out = ctx.apply_batch(cts, lambda m: (3 * m) % p)
    assert [ctx.decrypt(c) for c in out] == [(3 * (m % p)) % p for m in range(2 * p)]


def test_gates_match_truth_tables(ctx):
    table = {"nand": lambda a, b: not (a and b), "and": lambda a, b: a and b,
             "or": lambda a, b: a or b, "xor": lambda a, b: a != b}
    for name, f in table.items():
        for a in (False, True):
            for b in (False, True):
                r = ctx.gate(name, ctx.encrypt_bool(a), ctx.encrypt_bool(b))
                assert ctx.decrypt_bool(r) == f(a, b), (name, a, b)


def test_bad_input_is_a_clear_error(ctx):
    p = ctx.plaintext_modulus
    with pytest.raises(basalt.BasaltError,
                       match=rf"f\(0\) = {p} is outside the message space 0\.\.{p}"):
        ctx.apply(ctx.encrypt(1), lambda m: m + p)  # table value outside the message space
    with pytest.raises(basalt.BasaltError, match=r"f\(0\) = -1 is outside the message space"):
        ctx.apply(ctx.encrypt(1), lambda m: m - 1)
    with pytest.raises(basalt.BasaltError):
        ctx.encrypt(p)  # message outside the space
    with pytest.raises(basalt.BasaltError):
        Context("STRIX_I")  # insecure set without opt-in
    with pytest.raises(basalt.BasaltError):
        Context("NO_SUCH_SET", allow_insecure=True)
    data = ctx.encrypt(1).to_bytes()
    assert ctx.decrypt(ctx.ciphertext_from_bytes(data)) == 1
    for bad in (data[:-3], b"", bytes(len(data))):
        with pytest.raises(basalt.BasaltError):
            ctx.ciphertext_from_bytes(bad)
    other = Context("STRIX_I", allow_insecure=True)
    with pytest.raises(basalt.BasaltError):
        other.ciphertext_from_bytes(data)  # another key
    with pytest.raises(basalt.BasaltError):
        other.decrypt(ctx.encrypt(1))


def test_booleans_and_integers_are_distinct_types(ctx):
    with pytest.raises(basalt.BasaltError, match="boolean"):
        ctx.gate("and", ctx.encrypt(1), ctx.encrypt(1))
    with pytest.raises(basalt.BasaltError, match="integer"):
        ctx.decrypt(ctx.encrypt_bool(True))
    b = ctx.ciphertext_from_bytes(ctx.encrypt_bool(True).to_bytes())
    assert isinstance(b, basalt.tfhe.Bool) and ctx.decrypt_bool(b)


def test_another_key_is_refused_naming_both_ids(ctx):
    other = Context("STRIX_I", allow_insecure=True)
    for fn in (lambda: other.ciphertext_from_bytes(ctx.encrypt(1).to_bytes()),
               lambda: other._c.decrypt(ctx.encrypt(1)._raw),
               lambda: other._c.apply_table(ctx.encrypt(1)._raw, list(range(ctx.plaintext_modulus))),
               lambda: other._c.gate("and", ctx.encrypt_bool(True)._raw, ctx.encrypt_bool(True)._raw)):
        with pytest.raises(basalt.BasaltError, match="key mismatch") as e:
            fn()
        assert ctx.key_id.lstrip("0") in str(e.value) and other.key_id.lstrip("0") in str(e.value)


def test_apply_batch_reads_a_generator(ctx):
    out = ctx.apply_batch((ctx.encrypt(m % 2) for m in range(3)), lambda m: m)
    assert [ctx.decrypt(c) for c in out] == [0, 1, 0]


def test_silent_coercions_are_refused(ctx):
    for bad in (3.7, "3", True):
        with pytest.raises(basalt.BasaltError, match="integer"):
            ctx.encrypt(bad)
    with pytest.raises(basalt.BasaltError, match="integer"):
        ctx.apply(ctx.encrypt(1), lambda m: m / 2)
