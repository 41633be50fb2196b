"""Test configuration. TRITON_INTERPRET must be set before any triton.jit runs, so it is set here, first."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("fsa2rnn", deadline=None, max_examples=50, derandomize=True)
settings.load_profile("fsa2rnn")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
