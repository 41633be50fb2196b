"""brandoit:TSO3..5 (nn/tasks/tso.py), the authors' TSO_N, against an independent reading of the text: a plain
sentence-by-sentence simulation of who holds what, written from the task's definition, not from the task's table."""

import json
import re

import numpy as np
import pytest
import torch

from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train.config import TrainConfig, head_family_of

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def gen(seed):
    return torch.Generator().manual_seed(seed)


def simulate(words: list[str], n: int) -> tuple[list[tuple[str, tuple[str, ...]]], str]:
    """(the (parse, holders) after every word, the answer): parse is the sentence's first name until its second name
    or its item, holders the person holding each item in the task's item order, '-' before it is given."""
    task = get_task(f"brandoit:TSO{n}")
    people, items = task.vocab[:n], task.vocab[n : 2 * n]
    holder = dict.fromkeys(items, "-")
    opened, out = None, []
    for w in words:
        if w in people:
            if opened is None:
                opened = w
            else:
                holder = {it: (w if h == opened else opened if h == w else h) for it, h in holder.items()}
                opened = None
        elif w in items and opened is not None:
            holder[w], opened = opened, None
        out.append(("idle" if opened is None else opened, tuple(holder[it] for it in items)))
    asked = re.search(r"who has the (\w+) \?$", " ".join(words)).group(1)
    return out, holder[asked]


@pytest.mark.parametrize("n,states", [(3, 44), (4, 202), (5, 1132)])
def test_reachable_states_are_the_papers_counts(n, states):
    task = get_task(f"brandoit:TSO{n}")
    assert task.n_states == states and task.n_classes == states + n
    assert task.vocab_size == 2 * n + 8 and task.supervision == "dense"


@pytest.mark.parametrize("n,length", [(3, 27), (4, 64), (5, 259)])
def test_targets_follow_an_independent_simulation(n, length):
    task = get_task(f"brandoit:TSO{n}")
    b = task.sample(24, length, gen(n))
    assert b.inputs.shape == (24, length) and bool(b.mask.all())
    spare = (length - 5) % 5
    for row, tgt in zip(b.inputs.tolist(), b.targets.tolist()):
        words = [task.vocab[i] for i in row]
        text = " ".join(words)
        # the preamble names every person in order, each with a distinct item; then swaps of two distinct people
        pre = re.findall(r"(\w+) has the (\w+) \.", text.split(" who ")[0])
        assert [p for p, _ in pre] == task.vocab[:n] and sorted(q for _, q in pre) == sorted(task.vocab[n : 2 * n])
        assert all(p != q for p, q in re.findall(r"(\w+) swaps with (\w+) \.", text))
        assert text.count(". .") == spare and words[-5:-1] == ["who", "has", "the", words[-2]] and words[-1] == "?"
        states, answer = simulate(words, n)
        got = [task.classes[c] for c in tgt]
        want = [f"{p}|{','.join(h)}" for p, h in states[:-1]] + [f"answer: {answer}"]
        assert got == want


def test_same_seed_same_words_other_seed_differs():
    task = get_task("brandoit:TSO4")
    one, two, other = (task.sample(8, (40, 70), gen(s)) for s in (3, 3, 4))
    for x, y in zip((one.inputs, one.targets, one.mask), (two.inputs, two.targets, two.mask)):
        assert torch.equal(x, y)
    assert not torch.equal(one.inputs, other.inputs)
    # words of several lengths in one batch: padding past each word's end, never judged
    pos = torch.arange(one.inputs.shape[1])[None, :]
    assert torch.equal(one.mask, pos < one.lengths[:, None]) and (one.inputs[~one.mask] == task.pad_id).all()


def test_fresh_words_judge_the_answer_only_and_are_seeded():
    task = get_task("brandoit:TSO3")
    x, y = task.fresh_words(np.random.default_rng([7, 300]), 16, 300)
    x2, y2 = task.fresh_words(np.random.default_rng([7, 300]), 16, 300)
    assert np.array_equal(x, x2) and np.array_equal(y, y2) and x.shape == (16, 300)
    assert (y[:, :-1] == -1).all() and (y[:, -1] >= task.n_states).all()
    with pytest.raises(SpecError, match="at least 25 tokens"):
        task.sample(2, 24, gen(0))


def test_registers_are_the_parse_head_and_one_head_per_item():
    task = get_task("brandoit:TSO3")
    fam = head_family_of(TrainConfig(task="brandoit:TSO3", model="nfsm", arm="anchored", layers=2), task)
    assert fam.sizes == [4, 4, 4, 4] and fam.codes.shape == (task.n_classes, 4)
    codes = fam.codes[: task.n_states]
    assert len({tuple(c) for c in codes}) == task.n_states  # the registers separate the states
    assert (fam.codes[task.n_states :] == -1).all()  # the answers supervise no head
    # the code reads the state: parse 0 idle / 1 + person; an item's head 0 unset / 1 + its holder
    people = task.vocab[:3]
    for name, code in zip(task.classes, codes):
        parse, held = name.split("|")
        assert code[0] == (0 if parse == "idle" else 1 + people.index(parse))
        assert list(code[1:]) == [0 if h == "-" else 1 + people.index(h) for h in held.split(",")]
    with pytest.raises(SpecError, match="--head-family registers"):
        head_family_of(TrainConfig(task="brandoit:TSO3", model="nfsm", arm="anchored", head_family="regular"), task)
    with pytest.raises(SpecError, match="needs a task with registers"):
        head_family_of(TrainConfig(task="brandoit:S3", model="nfsm", head_family="registers"), get_task("brandoit:S3"))


def test_anchored_arm_pins_the_top_layer_of_two(tmp_path):
    from fsa2rnn.nn.layers.nfsm import NFSM
    from fsa2rnn.nn.train import load_run
    from fsa2rnn.nn.train.objectives import ANCHOR_SCALE
    from fsa2rnn.nn.train.trainer import train

    cfg = TrainConfig(
        task="brandoit:TSO3", model="nfsm", arm="anchored", layers=2, nu=0.5, loss="balanced", anchor_explore=0.01,
        d_model=16, batch=4, steps=3, lr=1e-2, warmup=0.0, val_every=3, val_samples=4, log_every=3, samples=4,
        eval_lengths=[30], train_length="30..30", lmax=True, cap=64, protocol="brandoit", progress=False,
    )  # fmt: skip
    train(cfg, tmp_path / "run")
    model, _, _ = load_run(tmp_path / "run")
    bottom, top = [m for m in model.modules() if isinstance(m, NFSM)]
    assert bottom.heads == top.heads == [4, 4, 4, 4]
    pinned = torch.zeros_like(top.out_proj.weight)
    pinned[:16, :16] = ANCHOR_SCALE * torch.eye(16)
    assert torch.equal(top.out_proj.weight, pinned) and not torch.equal(bottom.out_proj.weight[:16], pinned[:16])
    # L_max by the authors' faillen on fresh whole words, judged on the answer, from the training length
    ev = json.loads((tmp_path / "run" / "eval.json").read_text())
    assert ev["l_max_search"]["start"] == 30 and set(ev["l_max_trace"]) <= {"30", "31", "32", "45", "60", "64"}
    assert ev["exact"]["exact"] is None  # no table certificate for two layers


def test_faillen_on_whole_words_bisects_to_the_first_failing_length():
    """A predictor right before position 100 only, on words whose last position alone is judged: every length
    ≤ 100 passes, 101 fails; the words are drawn whole in groups and read in chunks with the state carried."""
    from fsa2rnn.nn.lmax import failing_length_fresh

    calls = []

    def whole_words(rng, n, length):
        calls.append((n, length))
        targets = np.full((n, length), -1)
        targets[:, -1] = rng.integers(0, 3, n)
        return targets.clip(min=0), targets

    def predict(inputs, state):
        done = 0 if state is None else state
        pos = done + np.arange(inputs.shape[1])[None, :]
        return np.where(pos < 100, inputs, inputs + 1), done + inputs.shape[1]

    l_max, capped, trace = failing_length_fresh(predict, None, start=16, cap=1024, n_words=8, chunk=7,
                                                whole_words=whole_words)  # fmt: skip
    assert (l_max, capped) == (101, False) and trace[100] == 1.0 and trace[101] == 0.0 and trace[128] == 0.0
    assert all(n * length <= 8 * 7 or n == 1 for n, length in calls)  # at most n_words × chunk symbols at a time
    assert failing_length_fresh(predict, None, start=16, cap=64, n_words=8, whole_words=whole_words)[:2] == (None, True)
