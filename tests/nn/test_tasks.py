"""nn/tasks: batches checked against independent evaluators (Automaton.run, Python arithmetic, a text parser, the
DLR paper's definitions written as loops), determinism under a seed, and the distribution constraints."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import FsaError, SpecError
from fsa2rnn.nn.tasks import get_task, list_tasks, parse_length_range
from fsa2rnn.nn.tasks.dlr import DLR_TASKS


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("name", ["S5:swaps", "T4", "grazzi:parity", "brandoit:S4", "brandoit:M11", "brandoit:FF"])
def test_word_problem_targets_are_the_automatons_states(name):
    task = get_task(name)
    b = task.sample(16, (3, 40), gen(1))
    a = task.automaton
    want = a.run(b.inputs.clamp_max(a.n_symbols - 1).numpy())
    got = b.targets.numpy()
    mask = b.mask.numpy()
    assert np.array_equal(got[mask], task.state_class.numpy()[want][mask])
    pos, lengths = np.arange(b.inputs.shape[1])[None, :], b.lengths.numpy()[:, None]
    assert task.supervision == ("answer" if name == "grazzi:parity" else "dense")  # parity: the last position only
    assert np.array_equal(mask, pos == lengths - 1 if task.supervision == "answer" else pos < lengths)
    assert (b.inputs.numpy()[pos >= lengths] == task.pad_id).all()
    assert int(b.lengths.min()) >= 3 and int(b.lengths.max()) <= 40


def test_same_seed_same_batches_and_other_seed_differs():
    names = ["grazzi:S5", "brandoit:DFF5", "grazzi:modarith_brackets", "brandoit:shuffled:4", "brandoit:TSO3"]
    names.append("dlr:mips")
    for name in names:
        task = get_task(name)
        length = 64 if task.kind == "regression" else (30, 40) if name == "brandoit:TSO3" else (3, 20)
        one, two = task.sample(8, length, gen(5)), task.sample(8, length, gen(5))
        other = task.sample(8, length, gen(6))
        for x, y in zip((one.inputs, one.targets, one.mask), (two.inputs, two.targets, two.mask)):
            assert torch.equal(x, y)
        assert not torch.equal(one.inputs, other.inputs)


def test_accept_task_predicts_membership():
    task = get_task("regex:(a|b)*abb:accept")
    b = task.sample(32, (1, 12), gen(2))
    for row, n, tgt in zip(b.inputs.tolist(), b.lengths.tolist(), b.targets.tolist()):
        word = "".join(task.vocab[i] for i in row[:n])
        want = [int(word[: t + 1].endswith("abb")) for t in range(n)]
        assert tgt[:n] == want


def test_dff5_never_reads_more_than_four_times_in_a_row_and_continues_across_chunks():
    task = get_task("brandoit:DFF5")
    read = task.automaton.symbols.index("read")
    words, targets, carry = [], [], None
    g = gen(3)
    for length in (7, 1, 50, 13):
        tokens, tgt, carry = task.continue_words(64, length, g, carry)
        words.append(tokens)
        targets.append(tgt)
    tokens = torch.cat(words, dim=1).numpy()
    runs = max(
        len(m.group()) for row in tokens for m in re.finditer("R+", "".join("R" if x == read else "x" for x in row))
    )
    assert runs == 4  # the limit is reached but never passed
    assert np.array_equal(torch.cat(targets, dim=1).numpy(), task.automaton.run(tokens))


def test_flipflop_writes_10_percent_in_training_and_1_percent_in_evaluation_with_three_classes():
    task = get_task("brandoit:FF")
    read = task.automaton.symbols.index("read")
    train = task.sample(64, 400, gen(4), train=True)
    evaluation = task.sample(64, 400, gen(4), train=False).inputs
    assert abs((train.inputs != read).float().mean().item() - 0.10) < 0.01
    assert abs((evaluation != read).float().mean().item() - 0.01) < 0.004
    # class 0 ("empty") until the first write, then the last write (1: reset, 2: set)
    x, y = train.inputs.numpy(), train.targets.numpy()
    for row, tgt in zip(x, y):
        writes = np.flatnonzero(row != read)
        first = writes[0] if len(writes) else len(row)
        assert (tgt[:first] == 0).all()
        last = np.maximum.accumulate(np.where(row != read, np.arange(len(row)), -1))
        assert np.array_equal(tgt[first:], row[last[first:]])


def test_dff5_forces_every_fifth_identity_of_a_drawn_run():
    task = get_task("brandoit:DFF5")
    b = task.sample(256, 64, gen(8))
    x = b.inputs.numpy()
    read = task.automaton.symbols.index("read")
    assert 0.30 < (x == read).mean() < 0.34  # uniform letters, a few identities forced away (1/3 · (1 − ~1 %))
    assert set(np.unique(b.targets.numpy())) == {0, 1, 2}


def test_tokens_per_step_lags_the_target():
    task = get_task("grazzi:S5:tokens4")
    b = task.sample(8, 40, gen(5))
    a = task.automaton
    blank = a.n_symbols
    x = b.inputs.numpy()
    assert (x[:, 1::4] == blank).all() and (x[:, 0::4] < blank).all()
    symbols = x[:, 0::4]
    states = a.run(symbols)  # one state per real symbol
    # token t = 4j + 3 is the first whose target is the state after symbol j
    assert np.array_equal(b.targets.numpy()[:, 3::4], states[:, : b.targets.shape[1] // 4])
    assert (b.targets.numpy()[:, :3] == a.initial).all()


def test_modarith_running_values_match_python_arithmetic():
    task = get_task("grazzi:modarith").with_labels("dense")
    b = task.sample(32, (3, 30), gen(6))
    for row, n, tgt in zip(b.inputs.tolist(), b.lengths.tolist(), b.targets.tolist()):
        tokens = [task.vocab[i] for i in row[:n]]
        for t in range(n):
            prefix = tokens[: t + 1]
            if prefix[-1] == "=":
                prefix = prefix[:-1]
            if prefix[-1] in "+-*":
                prefix = prefix[:-1]
            assert tgt[t] == eval("".join(prefix)) % 5
        assert (tokens[-1] == "=") == (n % 2 == 0)


def _binary_ops(tokens):
    """Positions of the binary operators: a '-' after '(' or another operator (or first) is a unary minus."""
    return [i for i, t in enumerate(tokens) if t in "+-*" and not (t == "-" and (i == 0 or tokens[i - 1] in "(+-*"))]


@pytest.mark.parametrize("name, ops", [("grazzi:modarith_brackets", "+-*"), ("grazzi:modarith_brackets:nomult", "+-")])
def test_modarith_brackets_is_the_authors_task(name, ops):
    """Every operation bracketed, unary minus, the value at '=' checked by Python's eval of the rendered expression."""
    task = get_task(name)
    b = task.sample(96, (3, 40), gen(7))
    assert torch.equal(b.lengths, torch.clamp(b.lengths + 2, min=5) - 2) and int(b.lengths.min()) >= 3
    seen = set()
    for row, n, m, tgt in zip(b.inputs.tolist(), b.lengths.tolist(), b.mask.tolist(), b.targets.tolist()):
        tokens = [task.vocab[i] for i in row[:n]]
        assert tokens[-1] == "=" and [i for i, v in enumerate(m) if v] == [n - 1]
        expr = tokens[:-1]
        assert tgt[n - 1] == eval("".join(expr), {"__builtins__": {}}) % 5
        binary = _binary_ops(expr)
        seen |= {expr[i] for i in binary} | {"unary" for i, t in enumerate(expr) if t == "-" and i not in binary}
        # every binary operation is bracketed: one '(' … ')' pair per operation, besides "(d)" and "(-d)"
        text = "".join(expr)
        plain = len(re.findall(r"\(-?\d\)", text))
        assert text.count("(") == text.count(")") == len(binary) + plain
        for i in binary:  # the operation's bracket opens just before its left operand's start
            depth = 0
            for j in range(i - 1, -1, -1):
                depth += {")": 1, "(": -1}.get(expr[j], 0)
                if depth < 0:
                    break
            assert depth == -1 and expr[j] == "("
    assert seen == set(ops) | {"unary"}
    assert task.value(["(", "-", "3", ")"]) == 2 and task.value(["(", "2", "*", "(", "-", "4", ")", ")"]) == 2


def test_shuffled_answers_follow_the_text():
    task = get_task("brandoit:shuffled:5")
    b = task.sample(32, (1, 12), gen(8))
    for row, m, tgt in zip(b.inputs.tolist(), b.mask.tolist(), b.targets.tolist()):
        words = [task.vocab[i] for i in row if task.vocab[i] != "[PAD]"]
        text = " ".join(words)
        holder = dict((item, who) for who, item in re.findall(r"(\w+) has the (\w+) \.", text))
        for p, q in re.findall(r"(\w+) swaps with (\w+) \.", text):
            holder = {it: (q if h == p else p if h == q else h) for it, h in holder.items()}
        item = re.search(r"who has the (\w+) \?", text).group(1)
        assert task.classes[tgt[m.index(True)]] == holder[item]


def test_dlr_tasks_follow_their_definitions():
    g = gen(9)
    L = 32
    b = get_task("dlr:shift").sample(2, L, g)
    x, y = b.inputs[..., 0], b.targets
    for j in range(8):
        for i in range(L):
            src = i - j * L // 8
            assert y[0, i, j] == (x[0, src] if src >= 0 else 0)
    b = get_task("dlr:cumsum").sample(2, L, g)
    x = b.inputs[0, :, 0].double()
    assert torch.allclose(
        b.targets[0, :, 0].double(), torch.stack([x[: i + 1].sum() / math.sqrt(i + 1) for i in range(L)]), atol=1e-5
    )
    b = get_task("dlr:reverse").sample(2, L, g)
    assert b.inputs.shape[1] == 2 * L and torch.equal(b.targets[0, L:, 0], b.inputs[0, :L, 0].flip(0))
    assert b.mask[0].tolist() == [False] * L + [True] * L
    b = get_task("dlr:sort").sample(1, L, g)
    x = b.inputs[0, :L, 0].tolist()
    assert b.targets[0, L:, 0].tolist() == sorted(x, key=lambda v: abs(v - x[0]))
    b = get_task("dlr:solve").sample(2, L, g)
    n = max(k for k in range(1, L) if L - k * k - k >= k)
    body = b.inputs[0, : n * (n + 1), 0].double().view(n, n + 1)
    sol = b.targets[0, -n:, 0].double()
    assert torch.allclose(body[:, :n] @ sol, body[:, n], atol=1e-5)
    b = get_task("dlr:mips").sample(1, 16, g)
    q, k, v = b.inputs[0, :, :12].split(4, dim=-1)
    for i in range(16):
        best = max(range(i + 1), key=lambda j: float(q[i] @ k[j]))
        assert torch.equal(b.targets[0, i], v[best])
    for name in DLR_TASKS:
        t = get_task(f"dlr:{name}")
        bb = t.sample(2, 64, g)
        assert bb.targets.shape[-1] == t.n_classes and bb.inputs.shape[-1] == t.vocab_size
        # the paper's position features, the last two channels of every task: (cos 2πi/T, sin 2πi/T)
        T = bb.inputs.shape[1]
        for i in (0, 1, T // 4, T - 1):
            want = torch.tensor([math.cos(2 * math.pi * i / T), math.sin(2 * math.pi * i / T)])
            assert torch.allclose(bb.inputs[:, i, -2:], want.expand(2, 2), atol=1e-6)
        assert t.vocab[-2:] == ["pos_cos", "pos_sin"]


def _dlr_reference(name: str, x: list[list[float]], L: int) -> tuple[list[list[float]], list[bool]]:
    """The DLR paper's §3.1 definition of task ``name`` as plain loops over the inputs ``x`` (T × features, the
    position features dropped): the targets (T × outputs) and the judged positions."""
    T = len(x)
    zero_rows = lambda n, c: [[0.0] * c for _ in range(n)]  # noqa: E731
    if name == "shift":  # y_ij = x_{i − jL/C}, C = 8
        y = [[x[i - j * L // 8][0] if i - j * L // 8 >= 0 else 0.0 for j in range(8)] for i in range(L)]
        return y, [True] * L
    if name == "cumsum":
        return [[sum(x[j][0] for j in range(i + 1)) / math.sqrt(i + 1)] for i in range(L)], [True] * L
    if name == "cummax":
        return [[max(x[j][0] for j in range(i + 1))] for i in range(L)], [True] * L
    if name in ("reverse", "sort"):  # L values, then L zeros; the answer on the L rightmost positions
        v = [x[i][0] for i in range(L)]
        out = v[::-1] if name == "reverse" else sorted(v, key=lambda a: abs(a - v[0]))
        return zero_rows(L, 1) + [[a] for a in out], [False] * L + [True] * L
    if name == "select":  # L + M values (M = 32 marked), M zeros; the marked values in order on the M rightmost
        marked = [x[i][0] for i in range(T) if x[i][1] == 1.0]
        m = len(marked)
        return zero_rows(T - m, 1) + [[a] for a in marked], [False] * (T - m) + [True] * m
    if name == "mips":  # y_i = v_{i'}, i' = argmax_{j ≤ i} ⟨q_i, k_j⟩
        q, k, v = ([row[4 * c : 4 * c + 4] for row in x] for c in range(3))
        dot = lambda a, b: sum(p * r for p, r in zip(a, b))  # noqa: E731
        return [v[max(range(i + 1), key=lambda j: dot(q[i], k[j]))] for i in range(L)], [True] * L
    if name == "context_shift":  # x' = (cos 2πs/L, sin 2πs/L, x); y_i = x'_{i−s}
        xp = [row[0] for row in x]
        s = round(math.atan2(xp[1], xp[0]) / (2 * math.pi) * L) % L
        return [[xp[i - s] if i >= s else 0.0] for i in range(L)], [True] * L
    if name == "solve":  # (a_1, b_1, …, a_N, b_N, 0…), A orthonormal, B = AX: X = AᵀB on the N rightmost
        n = max(k for k in range(1, L + 1) if L - k * k - k >= k)
        flat = [row[0] for row in x]
        rows = [flat[i * (n + 1) : (i + 1) * (n + 1)] for i in range(n)]
        sol = [sum(rows[i][c] * rows[i][n] for i in range(n)) for c in range(n)]
        return zero_rows(L - n, 1) + [[a] for a in sol], [False] * (L - n) + [True] * n
    raise AssertionError(name)


@pytest.mark.parametrize("name", DLR_TASKS)
def test_dlr_tasks_against_the_papers_definitions(name):
    """Every task's targets and judged positions recomputed from its inputs by the paper's definition (loops), the
    input layout (lengths, ‖x‖∞ = 1, unit vectors, orthonormal A) and the position features on every position."""
    L, g = 48, gen(3)
    t = get_task(f"dlr:{name}")
    b = t.sample(3, L, g)
    T = b.inputs.shape[1]
    assert T == {"reverse": 2 * L, "sort": 2 * L, "select": L + 64}.get(name, L)
    angle = 2 * math.pi * torch.arange(T, dtype=torch.float64) / T
    assert torch.allclose(b.inputs[..., -2:].double(), torch.stack([angle.cos(), angle.sin()], -1).expand(3, T, 2))
    for r in range(3):
        x = b.inputs[r, :, :-2].double().tolist()
        y, mask = _dlr_reference(name, x, L)
        assert b.mask[r].tolist() == mask
        got = b.targets[r][b.mask[r]].double()
        assert torch.allclose(got, torch.tensor(y, dtype=torch.float64)[torch.tensor(mask)], atol=1e-5), name
        feats = b.inputs[r, :, :-2].double()
        if name in ("shift", "cumsum", "cummax", "reverse", "sort"):
            assert feats[:L, 0].abs().max() == 1.0  # x ~ N(0, 1) normalized by ‖x‖∞
        if name == "select":
            assert feats[: L + 32, 0].abs().max() == 1.0 and feats[:, 1].sum() == 32 and feats[L + 32 :].eq(0).all()
        if name == "context_shift":
            assert feats[2:, 0].abs().max() == 1.0
        if name == "mips":
            assert torch.allclose(feats.view(L, 3, 4).norm(dim=-1), torch.ones(L, 3, dtype=torch.float64), atol=1e-6)
        if name == "solve":
            n = max(k for k in range(1, L + 1) if L - k * k - k >= k)
            a = feats[: n * (n + 1), 0].view(n, n + 1)[:, :n]
            assert torch.allclose(a @ a.T, torch.eye(n, dtype=torch.float64), atol=1e-5)
            assert abs(float(got.norm()) - 1) < 1e-5 and feats[n * (n + 1) :].eq(0).all()


def test_listing_and_bad_names():
    rows = {r["name"]: r for r in list_tasks(builtin=True)}
    assert rows["grazzi:parity"]["chance"] == 0.5 and rows["grazzi:modarith"]["n_classes"] == 5
    assert all(r["source"] for r in rows.values())
    # no paper task shadows a builtin: every name is prefixed
    assert all(n.split(":")[0] in ("grazzi", "brandoit", "dlr") for n in rows)
    with pytest.raises(FsaError, match="unknown task"):
        get_task("grazzi:bogus")
    with pytest.raises(FsaError, match="unknown task"):
        get_task("nonsense_task")
    with pytest.raises(SpecError, match="empty length range"):
        parse_length_range("40..3")
    assert parse_length_range("3..40") == (3, 40) and parse_length_range("64") == (64, 64)
    assert resolve_spec("parity").n_states == get_task("grazzi:parity").n_classes


def test_tasks_command_lists_every_paper_task():
    from click.testing import CliRunner

    from fsa2rnn.cli.main import main
    from fsa2rnn.nn.tasks.papers import PAPER_TASKS

    out = CliRunner().invoke(main, ["tasks", "--json"])
    assert out.exit_code == 0, out.output
    import json

    names = [r["name"] for r in json.loads(out.stdout)["tasks"]]
    assert [n for n in names if n in PAPER_TASKS] == [n for f in ("brandoit", "dlr", "grazzi") for n in PAPER_TASKS
                                                      if n.startswith(f + ":")]  # fmt: skip
    text = CliRunner().invoke(main, ["tasks"]).stdout
    assert "grazzi:parity" in text and "brandoit:FF" in text and "dlr:shift" in text


def test_brandoit_tasks_are_the_authors():
    z16 = get_task("brandoit:Z16")
    assert z16.vocab[:-1] == [str(i) for i in range(16)] and z16.n_classes == 16
    assert get_task("brandoit:Z16:gen").vocab[:-1] == ["0", "+1"]  # the other counter, under its own name
    for name in ("brandoit:FF", "brandoit:DFF5"):
        t = get_task(name)
        assert t.classes == ["empty", "0", "1"] and t.vocab[:-1] == ["read", "reset", "set"]
        assert t.automaton.initial == 0 and t.default_train_length == (64, 64)
    a5 = get_task("brandoit:A5").automaton
    assert a5.n_states == 60 and a5.action.tolist() == [[1, 2, 0, 3, 4], [0, 2, 3, 1, 4], [0, 1, 3, 4, 2]]
    m11 = get_task("brandoit:M11").automaton  # the Atlas generators and their inverses
    gens = [list(range(1, 11)) + [0], [0, 1, 6, 9, 5, 3, 10, 2, 8, 4, 7]]
    assert m11.action[:2].tolist() == gens and list(m11.symbols) == ["a", "b", "a^-1", "b^-1"] and m11.n_states == 7920
    assert (m11.action[2][m11.action[0]] == np.arange(11)).all()
