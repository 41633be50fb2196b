"""Test configuration. TRITON_INTERPRET must be set before any triton.jit runs, so it is set here, first."""

import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

# The test plug-in package (tests/plugins/fsa2rnn_toys, with its committed .dist-info) is importable here and in every
# subprocess the tests start, so that its entry points register exactly as an installed package's would.
PLUGINS = str(Path(__file__).resolve().parent / "plugins")
if PLUGINS not in sys.path:
    sys.path.insert(0, PLUGINS)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (PLUGINS, os.environ.get("PYTHONPATH", "")) if p)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("fsa2rnn", deadline=None, max_examples=50, derandomize=True)
settings.load_profile("fsa2rnn")


@pytest.fixture
def one_torch_thread():
    """Tiny tensors: one torch thread avoids thread-pool overhead on a busy 2-core machine (no effect on results).
    Modules opt in with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
