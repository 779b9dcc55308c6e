"""Presets estimated below 128-bit security need ``allow_insecure=True`` in Python too."""

import pytest

import basalt


def test_ckks_insecure_preset_needs_opt_in():
    with pytest.raises(Exception, match="insecure"):
        basalt.ckks.Context.preset("CRATERLAKE_80_1DIGIT", symbolic=True)
    ctx = basalt.ckks.Context.preset("CRATERLAKE_80_1DIGIT", symbolic=True, allow_insecure=True)
    assert ctx.slots > 0


def test_ckks_secure_preset_needs_no_opt_in():
    ctx = basalt.ckks.Context.preset("LATTIGO_RESIDUAL", symbolic=True)
    assert ctx.slots > 0


def test_bootstrap_insecure_preset_needs_opt_in():
    with pytest.raises(Exception, match="insecure"):
        basalt.bootstrap.Context.preset("CRATERLAKE_80_BOOT", symbolic=True)
    basalt.bootstrap.Context.preset("CRATERLAKE_80_BOOT", symbolic=True, allow_insecure=True)


def test_tfhe_insecure_set_needs_opt_in():
    # Strix set II: its source claims 128 bits, the estimate is below.
    with pytest.raises(Exception, match="insecure"):
        basalt.tfhe.Context("STRIX_II")
