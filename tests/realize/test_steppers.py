"""The code geometry of realize/steppers.py on small hand-made codes and on compiled NFSMs: faces, pushes, nearest
code points and radii against hand-worked values and brute force in numpy (every bisector of every pair of code
points), the one-hot fast path's conditions, the step modes, and the documented limits (docs/checks.md)."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError, ModelFileError
from fsa2rnn.nn.compiled.base import CodeBlock
from fsa2rnn.realize.steppers import Block, Stepper, stepper_for

pytestmark = pytest.mark.usefixtures("one_torch_thread")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


class FakeNet:
    """The parts of a compiled module that Stepper.__init__ reads: its blocks (recording the limit asked for)."""

    def __init__(self, blocks, modes=()):
        self._blocks, self.step_modes, self.asked = blocks, modes, None
        self.compiled = SimpleNamespace(target="fake")

    def to(self, dtype):
        return self

    def code_blocks(self, max_codes=None):
        self.asked = max_codes
        return self._blocks


def _one_hot_block(w):
    return CodeBlock(w, torch.eye(w, dtype=torch.float64), torch.arange(w), one_hot=True)


def _t(rows):
    return torch.tensor(rows, dtype=torch.float64)


def _brute_face(codes, labels, u):
    """Per row of u: (distance, unit normal) of the nearest bisector between u's nearest code point and a code point
    of another label at a positive distance — every pair tried in numpy."""
    codes, labels, u = np.asarray(codes), np.asarray(labels), np.asarray(u)
    out_d, out_n = [], []
    for x in u:
        n1 = int(np.argmin(((codes - x) ** 2).sum(1)))
        best, normal = math.inf, np.zeros_like(x)
        for k, c in enumerate(codes):
            gap = np.linalg.norm(c - codes[n1])
            if labels[k] == labels[n1] or gap == 0:
                continue
            # the bisector {y: (y − m)·n = 0}, m the midpoint, n = (c_k − c_n1)/‖c_k − c_n1‖
            n = (c - codes[n1]) / gap
            d = float(((codes[n1] + c) / 2 - x) @ n)
            if d < best:
                best, normal = d, n
        out_d.append(best)
        out_n.append(normal)
    return np.array(out_d), np.array(out_n)


def _brute_push(blocks, h):
    """The push over all blocks: the nearest face of any block, its normal placed in that block's coordinates."""
    h = np.asarray(h)
    per = [_brute_face(b.codes, b.labels, h[:, b.start : b.stop]) for b in blocks]
    out = np.zeros_like(h)
    for r in range(len(h)):
        i = int(np.argmin([d[r] for d, _ in per]))
        out[r, blocks[i].start : blocks[i].stop] = per[i][1][r]
    return out


def _brute_nearest(blocks, h):
    product = itertools.product(*[np.asarray(b.codes) for b in blocks])
    points = np.array([np.concatenate(p) for p in product])
    return np.sqrt(((np.asarray(h)[:, None, :] - points[None]) ** 2).sum(-1).min(1))


# ---------------------------------------------------------------------------------------------------- Block
def test_block_defaults_are_a_voronoi_code_without_the_one_hot_shortcut():
    b = Block(0, 1, _t([[0.0], [1.0]]), torch.tensor([0, 1]))
    assert b.cube is False and b.one_hot is False


def test_radius_of_a_code_with_one_label_is_infinite():
    """A single code point (or one label for all) has no face to another label: radius ∞, and a stepper's radius is
    then the other blocks' smallest."""
    one = Block(0, 1, _t([[3.0]]), torch.tensor([0]))
    same = Block(1, 2, _t([[0.0], [5.0]]), torch.tensor([2, 2]))
    line = Block(2, 3, _t([[0.0], [3.0]]), torch.tensor([0, 1]))
    assert one.radius == math.inf and same.radius == math.inf and line.radius == 1.5
    st = Stepper(FakeNet([CodeBlock(1, b.codes, b.labels) for b in (one, same, line)]), torch.float64)
    assert st.radius == 1.5


def test_face_skips_the_bisectors_between_code_points_of_one_label():
    """Codes (0,0), (1,0) read as state 0, (0,3) as state 1. From u = (0.4, 0.1) the bisector x = 1/2 (0.1 away)
    separates two code points of state 0: the nearest face to another state is y = 3/2, 1.4 away, normal (0, 1)."""
    b = Block(0, 2, _t([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]]), torch.tensor([0, 0, 1]))
    d, n = b.face(_t([[0.4, 0.1]]))
    assert torch.allclose(d, _t([1.4])) and torch.allclose(n, _t([[0.0, 1.0]]))
    label = b.labels[torch.cdist(_t([[0.4, 1.5 - 1e-9], [0.4, 1.5 + 1e-9]]), b.codes).argmin(-1)]
    assert label.tolist() == [0, 1]  # the readout does change there


def test_face_distance_when_code_points_are_closer_than_one():
    """Codes 0 and 0.5 on a line: from 0.1 the bisector 0.25 is 0.15 away; from 0.45 (nearest 0.5) 0.2 away."""
    b = Block(0, 1, _t([[0.0], [0.5]]), torch.tensor([0, 1]))
    d, n = b.face(_t([[0.1], [0.45]]))
    assert torch.allclose(d, _t([0.15, 0.2])) and torch.equal(n, _t([[1.0], [-1.0]]))
    assert b.radius == 0.25


def test_a_point_listed_under_two_labels_is_no_face():
    """A degenerate code (the origin read as states 0 and 1, radius 0): the zero-length pair has no bisector, so the
    push stays a finite unit vector (toward the code point of state 1 at (2, 0)), never 0/0."""
    b = Block(0, 2, _t([[0.0, 0.0], [0.0, 0.0], [2.0, 0.0]]), torch.tensor([0, 1, 1]))
    d, n = b.face(_t([[0.3, 0.2], [-0.5, 0.1]]))
    assert bool(torch.isfinite(n).all()) and torch.allclose(n, _t([[1.0, 0.0], [1.0, 0.0]]))
    assert torch.allclose(d, _t([0.7, 1.5]))
    assert b.radius == 0.0


def test_faces_of_random_codes_against_every_bisector():
    """Random codes in the plane with repeated labels: face() is the brute-force nearest bisector to another label."""
    gen = torch.Generator().manual_seed(3)
    codes = torch.randn(9, 2, generator=gen, dtype=torch.float64) * 0.6  # distances below and above 1
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 0, 1, 2])
    b = Block(0, 2, codes, labels)
    u = codes[torch.randint(0, 9, (200,), generator=gen)] + 0.3 * torch.randn(200, 2, generator=gen)
    d, n = b.face(u.double())
    want_d, want_n = _brute_face(codes, labels, u)
    assert np.allclose(d.numpy(), want_d) and np.allclose(n.numpy(), want_n)


# ---------------------------------------------------------------------------------------------------- one-hot path
def test_one_hot_path_conditions():
    """The fast path needs every block one-hot and all of one width ≥ 2 (several blocks included)."""

    def flag(blocks):
        return Stepper(FakeNet(blocks), torch.float64).one_hot

    assert flag([_one_hot_block(2)]) and flag([_one_hot_block(3)] * 3) and flag([_one_hot_block(2)] * 4)
    assert not flag([_one_hot_block(2), _one_hot_block(3)])
    assert not flag([_one_hot_block(1)] * 2)
    assert not flag([_one_hot_block(3), CodeBlock(3, torch.eye(3, dtype=torch.float64), torch.arange(3))])
    assert stepper_for(compile_nfsm(resolve_spec("S5"))).one_hot  # 4 heads of 5 one-hot attractors
    assert stepper_for(compile_nfsm(resolve_spec("flipflop"))).one_hot  # one head of 2


def _near_codes(blocks, n, seed, scale):
    gen = torch.Generator().manual_seed(seed)
    parts = [b.codes[torch.randint(0, len(b.codes), (n,), generator=gen)] for b in blocks]
    h = torch.cat(parts, 1)
    return h + scale * torch.randn(h.shape, generator=gen, dtype=torch.float64)


@pytest.mark.parametrize(
    "case",
    ["S5 nfsm (4 heads of 5)", "flipflop nfsm (width 2)", "3 one-hot blocks of 3", "one-hot widths 2 and 3"],
)
def test_push_and_nearest_against_brute_force(case):
    """push(h) is the unit normal of the nearest face of any block (every bisector of every block tried), and
    nearest(h) the distance to the nearest point of the product code (enumerated), on the one-hot fast path and off
    it (one-hot blocks of different widths)."""
    if case.startswith("S5"):
        st = stepper_for(compile_nfsm(resolve_spec("S5")))
    elif case.startswith("flipflop"):
        st = stepper_for(compile_nfsm(resolve_spec("flipflop")))
    elif case.startswith("3"):
        st = Stepper(FakeNet([_one_hot_block(3)] * 3), torch.float64)
    else:
        st = Stepper(FakeNet([_one_hot_block(2), _one_hot_block(3)]), torch.float64)
    assert st.one_hot == (case != "one-hot widths 2 and 3")
    h = _near_codes(st.blocks, 300, 0, 0.15)
    assert np.allclose(st.push(h).numpy(), _brute_push(st.blocks, h))
    assert np.allclose(st.nearest(h).numpy(), _brute_nearest(st.blocks, h))


def test_one_hot_push_leaves_through_the_block_with_the_smallest_gap():
    """Two one-hot blocks of 3, hand-worked: the push is (e_j − e_k)/√2 for the two largest entries k, j of the block
    where they are closest — (0.3, −0.2 | 0.9, 0.7): the second block (gap 0.2 < 0.5, though its top two sum to
    more); (0.6, 0.8 | 0, 1): the first (gap 0.2 < 1, its top two summing to more), away from its largest, 0.8."""
    st = Stepper(FakeNet([_one_hot_block(3)] * 2), torch.float64)
    h = _t([[0.3, -0.2, -0.1, 0.9, 0.7, 0.0], [0.6, 0.8, 0.3, 0.0, 1.0, 0.0]])
    r = 1 / math.sqrt(2)
    want = _t([[0, 0, 0, -r, r, 0], [r, -r, 0, 0, 0, 0]])
    assert torch.allclose(st.push(h), want)
    assert torch.allclose(st.nearest(h), torch.from_numpy(_brute_nearest(st.blocks, h)))


# ---------------------------------------------------------------------------------------------------- modes
def test_step_modes():
    """A Householder model steps fused or factor by factor as asked; a diagonal layer (fused only) falls back to
    fused; an unknown mode is refused where there is a choice and ignored where there is none."""
    hh = compile_householder(resolve_spec("Z5"))
    assert stepper_for(hh, mode="factors").mode == "factors" and stepper_for(hh, mode="fused").mode == "fused"
    st = stepper_for(hh, mode="factors")
    h = st.step(st.initial(2), torch.tensor([0, 1]))
    want = st.net.step(st.initial(2), torch.tensor([0, 1]), None, mode="factors")
    assert torch.equal(h, want)
    with pytest.raises(ModelFileError, match="unknown mode"):
        stepper_for(hh, mode="sideways")
    assert stepper_for(compile_diagonal(resolve_spec("Z7")), mode="factors").mode == "fused"
    assert stepper_for(compile_nfsm(resolve_spec("flipflop")), mode="sideways").mode is None


# ---------------------------------------------------------------------------------------------------- limits
def _documented_limits():
    text = " ".join(DOCS.read_text().split())
    per_block = re.search(r"with a limit of 2\^(\d+) code points a block", text)
    voronoi = re.search(r"A Voronoi block of more than 2\^(\d+) code points is refused", text)
    assert per_block and voronoi, "docs/checks.md no longer states the code geometry's limits"
    return 2 ** int(per_block.group(1)), 2 ** int(voronoi.group(1))


def test_documented_code_limits():
    """docs/checks.md: the stepper asks for blocks of at most 2^16 code points; a Voronoi block of 2^12 code points
    keeps its pairwise distances, one more is refused."""
    per_block, voronoi = _documented_limits()
    net = FakeNet([_one_hot_block(2)])
    Stepper(net, torch.float64)
    assert net.asked == per_block
    ok = Block(0, 1, torch.arange(voronoi, dtype=torch.float64)[:, None], torch.arange(voronoi) % 2)
    assert ok.pairwise.shape == (voronoi, voronoi) and ok.radius == 0.5
    big = Block(0, 1, torch.arange(voronoi + 1, dtype=torch.float64)[:, None], torch.arange(voronoi + 1) % 2)
    with pytest.raises(LimitExceededError, match=f"limit {voronoi}"):
        big.face(_t([[0.2]]))
