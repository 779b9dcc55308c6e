import basalt


def test_version_matches_the_rust_crate():
    # The version string comes from the compiled extension, so this fails if the wheel is stale
    # or missing.
    assert basalt.__version__.count(".") == 2
