"""Every executor of a compiled model gives the automaton's states, and they all reject bad input alike.

Driven by the target registry (fsa2rnn.compiler.registry: the built-in targets and every plug-in's, the test
package's toy target included) over every small case of tests/cases.py: each target that compiles the case (a
ConstructionError or LimitExceededError skips it) is run by every executor it names — numpy (``numpy_executor``),
torch (``torch_module``) under each of its ``torch_variants`` (scans, modes, impls), the exact interpreter
(``exact_interpreter``) and the stepper (``stepper``, in each of the module's ``step_modes``) — on random words of
lengths up to 10³ with ``lengths``, and each must equal ``Automaton.run`` (−1 past a word's length); symbol names
give what their ids give. The executors that step one symbol at a time in Python (the exact interpreter, the
stepper, the sequential torch recurrences) read the words' first STEPPED symbols, to keep the test fast. Then the
same bad ids go to every executor, which must raise the same SymbolIdError with the same message. A new target
plugs in by registering: nothing here names one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from cases import SMALL_CASES, case_automaton

from fsa2rnn.compiler import exact_executor, get_target, load_executor, target_names
from fsa2rnn.fsa.errors import ConstructionError, LimitExceededError, SymbolIdError, UnknownStateError
from fsa2rnn.nn import load_model
from fsa2rnn.realize.steppers import stepper_for

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TARGETS = target_names()
#: word lengths of the random batch (one word each): one step, a chunk boundary, 10³
LENGTHS = (1, 65, 1000)
#: symbols the per-step executors (exact interpreter, stepper) read
STEPPED = 150
BAD_IDS = ([[0, -1]], "n", [[0.5, 1.0]], [[[0]]], [[0, 1], [2]])


@pytest.fixture(
    scope="module", params=[(c, t) for c in SMALL_CASES for t in TARGETS], ids=lambda p: f"{p[0].name}-{p[1]}"
)
def compiled(request):
    case, name = request.param
    target = get_target(name)
    a = case_automaton(case)
    if a.initial is None:
        a = a.replace(initial=0)
    try:
        model = target.compile_model(a)
    except (ConstructionError, LimitExceededError) as exc:
        pytest.skip(f"{name} does not compile {case.name}: {exc}")
    return a, target, model


def _executors(target: Any, model: Any) -> dict[str, tuple[Callable[..., Any], bool]]:
    """name → (predict_states(ids, lengths) as numpy arrays, whether it steps one symbol at a time in Python)."""
    net = load_model(model)
    out: dict[str, tuple[Callable[..., Any], bool]] = {
        "numpy": (load_executor(model).predict_states, False),
        "exact": (exact_executor(model).predict_states, True),
    }
    for opts in target.torch_variants:
        out[f"torch{dict(opts)}"] = (
            lambda ids, lengths=None, o=opts: np.asarray(net.predict_states(ids, lengths, **o)),
            False,
        )
    for mode in net.step_modes or ("fused",):
        out[f"stepper-{mode}"] = (stepper_for(model, "float64", mode).predict_states, True)
    return out


def test_every_executor_gives_the_automatons_states(compiled):
    a, target, model = compiled
    rng = np.random.default_rng(len(a.states) * 31 + a.n_symbols)
    length = max(LENGTHS)
    ids = rng.integers(0, a.n_symbols, (len(LENGTHS), length))
    lengths = np.array(LENGTHS)
    want = a.run(ids, start=np.full(len(ids), model.initial))
    want = np.where(np.arange(length)[None, :] < lengths[:, None], want, -1)
    ids[0, 1:] = -7  # padding past a length may hold anything
    for name, (predict, stepped) in _executors(target, model).items():
        t = STEPPED if stepped else length
        got = np.asarray(predict(ids[:, :t], np.minimum(lengths, t)))
        assert got.shape == (len(ids), t) and got.dtype == np.int64, name
        np.testing.assert_array_equal(got, want[:, :t], err_msg=name)
        assert np.asarray(predict(ids[1, :5])).shape == (5,), name  # one word (T,) → (T,)
        assert np.asarray(predict(np.zeros((0, 4), dtype=np.int64))).shape == (0, 4), name  # an empty batch
        names = [[a.symbols[x] for x in word] for word in ids[1:, :5].tolist()]  # symbol names, as Automaton.run
        np.testing.assert_array_equal(np.asarray(predict(names)), want[1:, :5], err_msg=f"{name} (names)")


def test_every_executor_rejects_bad_ids_alike(compiled):
    a, target, model = compiled
    for bad in BAD_IDS:
        bad = [[0, a.n_symbols]] if bad == "n" else bad
        messages = {}
        for name, (predict, _) in _executors(target, model).items():
            with pytest.raises(SymbolIdError) as err:
                predict(bad)
            messages[name] = str(err.value)
        assert len(set(messages.values())) == 1, messages


def test_predict_accept_on_every_executor(compiled):
    a, target, model = compiled
    ids = np.random.default_rng(1).integers(0, a.n_symbols, (2, 30))
    net, executor = load_model(model), load_executor(model)
    if a.accepting is None:
        for f in (net.predict_accept, executor.predict_accept):
            with pytest.raises(UnknownStateError, match="no accepting set"):
                f(ids)
        return
    want = a.accepting[a.run(ids, start=np.full(2, model.initial))]
    np.testing.assert_array_equal(executor.predict_accept(ids, [30, 12]), want & (np.arange(30) < [[30], [12]]))
    np.testing.assert_array_equal(net.predict_accept(torch.from_numpy(ids)).numpy(), want)
