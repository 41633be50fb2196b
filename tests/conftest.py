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


@pytest.fixture(autouse=True)
def _walltimes(tmp_path_factory, monkeypatch):
    """`fsa2rnn reproduce` folds the wall times of the runs it finishes into a tracked file
    (nn/train/reproduce/walltimes.py): the tests' runs go to a file of their own."""
    monkeypatch.setenv("FSA2RNN_WALLTIMES", str(tmp_path_factory.getbasetemp() / "walltimes.json"))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


#: the test files that train models, run the examples or the documentation's blocks (which train too): marked
#: ``training`` and left out of ``make test-fast`` (the contracts and the unit tests); ``make test`` runs them all
TRAINING = {
    "test_arms.py", "test_end_to_end.py", "test_evaluate.py", "test_examples.py", "test_extract_models.py",
    "test_faillen_brandoit.py", "test_gpu_fla.py", "test_hostile_signals.py", "test_init_from.py", "test_launch.py",
    "test_lr_grid.py", "test_lstar.py", "test_plugin_models.py", "test_presets_medium.py", "test_readme.py",
    "test_reproduce.py", "test_reproduce_dlr.py", "test_reproduce_grazzi.py", "test_reproduce_table1.py",
    "test_run_batches.py", "test_supervision.py", "test_theorem_mutants.py", "test_theorems.py", "test_train.py",
    "test_train_ddp.py", "test_train_eval.py", "test_tso.py",
}  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in TRAINING:
            item.add_marker(pytest.mark.training)
