"""Encrypted radix integers from Python, checked against Python ints (wrapped to the type):
client/server split, operators, comparisons as encrypted booleans, select, shifts, bytes, and
bad input. Runs on TFHE-rs's 2+2-bit set with a bounded number of operations."""

import random

import pytest

import basalt
from basalt.tfhe import (Int8, Int32, IntegerClient, IntegerServer, Uint8, Uint16, Uint32,
                         Uint64, maximum, minimum, select)


def wrap(v, bits, signed):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


@pytest.fixture(scope="module")
def keys():
    client = IntegerClient()  # TFHERS_2_2_KS_PBS
    return client, client.server()


def test_uint8_operators_against_python_ints(keys):
    client, server = keys
    rng = random.Random(1)
    a, b = rng.randrange(256), rng.randrange(256)
    x, y = Uint8.encrypt(client, a), client.encrypt_uint8(b)
    with server:
        cases = {
            "add": (x + y, a + b), "sub": (x - y, a - b), "mul": (x * y, a * b),
            "scalar": (3 * x + 7, 3 * a + 7), "rsub": (5 - x, 5 - a), "neg": (-x, -a),
            "and": (x & y, a & b), "or": (x | 0x5A, a | 0x5A), "xor": (x ^ y, a ^ b),
            "not": (~x, ~a), "shl": (x << 3, a << 3), "shr": (x >> 5, a >> 5),
            "rotl": (x.rotate_left(3), ((a << 3) | (a >> 5))),
            "min": (minimum(x, y), min(a, b)), "max": (maximum(x, 17), max(a, 17)),
        }
    for name, (ct, want) in cases.items():
        assert client.decrypt(ct) == wrap(want, 8, False), name
    # Results remember their server: chains work outside `with`.
    z = cases["add"][0] * 2
    assert client.decrypt(z) == wrap(2 * (a + b), 8, False)


def test_comparisons_are_encrypted_booleans(keys):
    client, server = keys
    for a, b in [(200, 100), (7, 7), (-100, 27)]:
        ty = Int8 if a < 0 else Uint8
        x, y = ty.encrypt(client, a), ty.encrypt(client, b)
        with server:
            got = {op: client.decrypt(f(x, y)) for op, f in {
                "eq": lambda p, q: p == q, "ne": lambda p, q: p != q, "lt": lambda p, q: p < q,
                "le": lambda p, q: p <= q, "gt": lambda p, q: p > q, "ge": lambda p, q: p >= q,
            }.items()}
            both = (x > y) & (x != 3)
            pick = select(x < y, x, y)
        assert got == {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
                       "ge": a >= b}, (a, b)
        assert isinstance(both, basalt.tfhe.EncryptedBool)
        assert client.decrypt(both) == (a > b and a != 3)
        assert client.decrypt(pick) == min(a, b)
        with pytest.raises(basalt.BasaltError):
            bool(x < y)


def test_wider_types_and_encrypted_shift(keys):
    client, server = keys
    rng = random.Random(2)
    a, b = rng.randrange(1 << 32), rng.randrange(1 << 32)
    x, y = Uint32.encrypt(client, a), Uint32.encrypt(client, b)
    s = Int32.encrypt(client, -123456)
    k = Uint8.encrypt(client, 9)
    with server:
        assert client.decrypt(x + y) == wrap(a + b, 32, False)
        assert client.decrypt(x - y) == wrap(a - b, 32, False)
        assert client.decrypt(x > y) == (a > b)
        assert client.decrypt(s >> 4) == -123456 >> 4
        assert client.decrypt(s * -3) == wrap(-123456 * -3, 32, True)
    x16 = Uint16.encrypt(client, 40000)
    with server:
        assert client.decrypt(x16 << k) == wrap(40000 << 9, 16, False)


def test_bytes_round_trip_and_server_from_bytes(keys):
    client, server = keys
    remote = IntegerServer.from_bytes(server.to_bytes())
    assert remote.key_id == client.key_id
    x = remote.load(Uint8, Uint8.encrypt(client, 250).to_bytes())
    y = remote.load(Uint8, client.encrypt_uint8(9).to_bytes())
    assert client.decrypt(x + y) == (250 + 9) % 256
    with pytest.raises(basalt.BasaltError):
        remote.load(Uint16, x.to_bytes())  # wrong type
    with pytest.raises(basalt.BasaltError):
        remote.load(Uint8, x.to_bytes()[:-5])  # truncated


def test_bad_input_is_a_clear_error(keys):
    client, server = keys
    with pytest.raises(basalt.BasaltError, match="out of range"):
        Uint8.encrypt(client, 256)
    with pytest.raises(basalt.BasaltError, match="out of range"):
        Int8.encrypt(client, -129)
    x, y = Uint8.encrypt(client, 1), Uint16.encrypt(client, 1)
    with server:
        with pytest.raises(basalt.BasaltError, match="different integer types"):
            x + y
        with pytest.raises(basalt.BasaltError, match="out of range"):
            x & 300
    with pytest.raises(basalt.BasaltError, match="no server key"):
        x + x
    other = IntegerClient()
    with other.server():
        with pytest.raises(basalt.BasaltError, match="key mismatch"):
            x + x


def test_clear_values_are_checked_not_coerced(keys):
    client, server = keys
    # A type called on a clear value: out of range says so, in range says how to encrypt.
    with pytest.raises(basalt.BasaltError, match=r"300 is out of range for Uint8 \(0\.\.=255\)"):
        Uint8(300)
    with pytest.raises(basalt.BasaltError, match=r"-129 is out of range for Int8 \(-128\.\.=127\)"):
        Int8(-129)
    with pytest.raises(basalt.BasaltError, match=r"Uint8\.encrypt\(client, value\)"):
        Uint8(7)
    for bad in (3.7, "3", True, None):
        with pytest.raises(basalt.BasaltError, match="must be an integer"):
            Uint8.encrypt(client, bad)
    # Beyond what the core's integers hold: still the type's error, not an OverflowError.
    with pytest.raises(basalt.BasaltError, match="out of range for Uint64"):
        Uint64.encrypt(client, 1 << 200)
    x = Uint8.encrypt(client, 5)
    with server:
        # Arithmetic wraps: a constant counts mod 2^8, whatever its size; shifts mod 8.
        assert client.decrypt(x + ((1 << 200) + 3)) == (5 + (1 << 200) + 3) % 256
        assert client.decrypt(x << ((1 << 70) + 1)) == 10
        with pytest.raises(basalt.BasaltError, match="out of range for Uint8"):
            x < (1 << 200)
        with pytest.raises(basalt.BasaltError, match="out of range for Uint8"):
            x | -1
