import basalt


def test_version_matches_the_rust_crate():
    # The version string comes from the compiled extension, so this fails if the wheel is stale
    # or missing.
    assert basalt.__version__.count(".") == 2


def test_basalt_error_pickles_as_the_package_class():
    # Ray ships a task's exception to the caller by pickle: the class must be found by its
    # module and name, and the message must survive.
    import pickle

    assert basalt.BasaltError.__module__ == "basalt"
    try:
        basalt.ckks.Parameters.from_json("{not json")
    except basalt.BasaltError as e:
        raised = e
    back = pickle.loads(pickle.dumps(raised))
    assert type(back) is basalt.BasaltError and isinstance(back, ValueError)
    assert str(back) == str(raised) and "parameters" in str(back)
    assert b"basalt._basalt" not in pickle.dumps(raised)
