"""Several lookup tables of one ciphertext from one bootstrap (`apply_many`), against the
functions in the clear: every value up to the bound, every number of tables that fits."""

import pytest

from basalt import BasaltError
from basalt.tfhe import Context


@pytest.fixture(scope="module")
def ctx():
    return Context("TFHERS_2_2_KS_PBS")


def test_every_value_every_count(ctx):
    p = ctx.plaintext_modulus
    for d in (1, 3, 7):
        for k in range(1, p // (d + 1) + 1):
            fs = [lambda m, i=i: (m * (2 * i + 1) + i) % p for i in range(k)]
            for m in range(d + 1):
                outs = ctx.apply_many(ctx.encrypt(m), fs, max_value=d)
                assert [ctx.decrypt(c) for c in outs] == [f(m) for f in fs]


def test_digit_and_carry_chain_into_later_tables(ctx):
    m, p = ctx.message_modulus, ctx.plaintext_modulus
    for v in range(2 * m):
        digit, carry = ctx.apply_many(ctx.encrypt(v), [lambda x: x % m, lambda x: x // m],
                                      max_value=2 * m - 1)
        assert ctx.decrypt(ctx.apply(digit, lambda x: (x + 1) % m)) == (v % m + 1) % m
        assert ctx.decrypt(ctx.apply(carry, lambda x: (3 * x) % p)) == 3 * (v // m)


def test_bad_packings_are_clear_errors(ctx):
    ct = ctx.encrypt(1)
    with pytest.raises(BasaltError, match="needs at least one function"):
        ctx.apply_many(ct, [lambda x: x] * 3, max_value=5)
    with pytest.raises(BasaltError, match="needs at least one function"):
        ctx.apply_many(ct, [], max_value=3)
    with pytest.raises(BasaltError, match="outside the message space"):
        ctx.apply_many(ct, [lambda x: x, lambda x: x + 14], max_value=3)
    with pytest.raises(BasaltError, match="max_value must be an integer"):
        ctx.apply_many(ct, [lambda x: x], max_value=1.5)
