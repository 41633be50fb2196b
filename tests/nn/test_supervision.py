"""Which positions a task judges (nn/tasks/base.py): the negative-eigenvalues paper's answer-only supervision for its
Chomsky tasks (parity at the last position; modular arithmetic at the value after '=' with odd total lengths 3..39,
the authors' harness), every position for word problems, ``--labels`` switching where a task offers both; training
and evaluation follow the mask."""

from __future__ import annotations

import pytest
import torch

from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.metrics import accuracy_at_lengths, failing_length_of, range_accuracy
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train.config import TrainConfig, task_of

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_declared_supervision():
    want = {"grazzi:parity": "answer", "grazzi:modarith": "answer", "grazzi:modarith_brackets": "answer",
            "grazzi:S5": "dense", "brandoit:Z2": "dense", "S3": "dense", "brandoit:shuffled:3": "answer",
            "brandoit:TSO3": "dense"}  # fmt: skip
    for name, kind in want.items():
        assert get_task(name).supervision == kind, name
    assert get_task("dlr:shift").supervision is None  # the regression tasks' masks are their own


def test_modarith_answer_after_equals_with_odd_totals():
    task = get_task("grazzi:modarith")
    b = task.sample(400, (3, 40), gen(1))
    totals = b.lengths + 1  # the word read ends in '=', the answer counts in the authors' length
    assert set(totals.tolist()) == set(range(3, 40, 2))
    for row, n, m, tgt in zip(b.inputs.tolist(), b.lengths.tolist(), b.mask.tolist(), b.targets.tolist()):
        tokens = [task.vocab[i] for i in row[:n]]
        assert tokens[-1] == "=" and all(t in "01234" for t in tokens[0:-1:2])
        assert all(t in "+-*" for t in tokens[1:-1:2])
        assert [i for i, v in enumerate(m) if v] == [n - 1]  # judged at '=' only
        assert tgt[n - 1] == eval("".join(tokens[:-1])) % 5  # Python's precedence: * before + -, left to right
    assert task.sample(4, 40, gen(2)).lengths.tolist() == [38] * 4  # an even length: the odd total below it
    with pytest.raises(SpecError, match="odd total"):
        task.sample(4, (1, 2), gen(3))


def test_labels_switch_and_its_errors():
    parity = get_task("grazzi:parity").with_labels("dense")
    b = parity.sample(8, (3, 9), gen(4))
    assert torch.equal(b.mask, torch.arange(b.mask.shape[1])[None, :] < b.lengths[:, None])
    assert task_of(TrainConfig(task="grazzi:parity", labels="dense")).supervision == "dense"
    assert task_of(TrainConfig(task="S5", labels="answer")).supervision == "answer"
    with pytest.raises(SpecError, match="--labels must be one of answer, dense"):
        TrainConfig(task="grazzi:parity", labels="sparse")
    with pytest.raises(SpecError, match="does not offer it"):
        task_of(TrainConfig(task="grazzi:modarith_brackets", labels="dense"))
    with pytest.raises(SpecError, match="judged positions are fixed"):
        task_of(TrainConfig(task="dlr:shift", labels="answer"))


def _parity_oracle() -> SequenceModel:
    """A model that outputs the parity of the prefix: the compiled parity DeltaNet (SequenceModel.from_compiled)."""
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec

    return SequenceModel.from_compiled(compile_householder(resolve_spec("parity")))


def test_evaluation_judges_the_answer_only():
    """A model right at the last position and wrong elsewhere scores 1 under answer-only supervision, and its
    dense score counts the wrong positions (accuracy_at_lengths and range_accuracy read the mask)."""
    exact = _parity_oracle()
    task = get_task("grazzi:parity")
    a = task.automaton
    # the exact model, but with the classifier's classes swapped before the last position: wrong at 0..L−2
    for length in (5, 9):
        words = task.sample(64, length, gen(5), train=False)
        pred = exact.predict_states(words.inputs.clamp_max(a.n_symbols - 1))
        assert torch.equal(pred[words.mask], words.targets[words.mask])
    res = accuracy_at_lengths(exact, task, [5, 9], samples=64)
    assert res["token_accuracy"] == [1.0, 1.0] and res["sequence_accuracy"] == [1.0, 1.0]
    assert range_accuracy(exact, task, 3, 12, samples=128)["accuracy"] == 1.0

    class LastOnly(torch.nn.Module):
        """Right only where the position is the word's last (a fixed length L): flips the logits elsewhere."""

        def __init__(self, length):
            super().__init__()
            self.length, self.inner, self.config = length, exact, exact.config
            self.blocks, self.embedding = exact.blocks, exact.embedding

        def __getattr__(self, name):  # the rest of what the metrics read of a SequenceModel: the wrapped one's
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.inner, name)

        def forward(self, ids, state=None, return_state=False):
            logits, st = self.inner(ids, state, True)
            pos = torch.arange(ids.shape[1])
            flipped = torch.where((pos != self.length - 1)[None, :, None], logits.flip(-1), logits)
            return (flipped, st) if return_state else flipped

    model = LastOnly(7)
    ans = accuracy_at_lengths(model, task, [7], samples=32)
    dense = accuracy_at_lengths(model, get_task("grazzi:parity").with_labels("dense"), [7], samples=32)
    assert ans["token_accuracy"] == [1.0] and ans["sequence_accuracy"] == [1.0]
    assert dense["token_accuracy"] == [pytest.approx(1 / 7)] and dense["sequence_accuracy"] == [0.0]


def test_lmax_is_not_searched_on_answer_only_modarith():
    exact = _parity_oracle()
    res = failing_length_of(exact, get_task("grazzi:modarith"), start=8, cap=16, n_words=8)
    assert res["l_max"] is None and "prefixes" in res["l_max_note"]
    res = failing_length_of(exact, get_task("grazzi:parity"), start=8, cap=16, n_words=8)
    assert res["l_max_capped"] and res["l_max_note"] is None  # parity's prefixes are words: the exact model holds
