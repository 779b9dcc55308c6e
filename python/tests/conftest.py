"""Shared test set-up."""

import signal

import pytest


@pytest.fixture(autouse=True, scope="session")
def _sigint_raises_keyboard_interrupt():
    """A shell starts background jobs with SIGINT ignored, and Python then installs no handler
    for it, so the Ctrl-C tests' simulated interrupt (``_thread.interrupt_main``) would do
    nothing and they would fail. Restore Python's own handler, as an interactive run has."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
