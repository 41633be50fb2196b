"""Head families of the anchored NFSM arm (compiler/nfsm_families.py): the authors' quotient heads, checked against
the automaton and against the subgroup counts of the groups (block systems of the regular action ↔ subgroups)."""

import numpy as np
import pytest

from fsa2rnn.compiler.targets.nfsm.families import block_systems, head_family
from fsa2rnn.fsa.errors import ConstructionError, SpecError
from fsa2rnn.nn.tasks import get_task


def _check(a, fam):
    """Independent check: codes follow the automaton, start at 0 and separate the states."""
    trans = np.asarray(a.transitions)
    for i, d in enumerate(fam.sizes):
        c = fam.codes[:, i]
        assert c.min() == 0 and c.max() == d - 1 and c[a.initial] == 0
        for x in range(a.n_symbols):
            assert np.array_equal(c[trans[x]], fam.tables[x, i][c])
    assert len({tuple(r) for r in fam.codes.tolist()}) == a.n_states


@pytest.mark.parametrize(
    "task,family,sizes,want",
    [
        ("brandoit:S3", "factored", None, [3, 2]),
        ("brandoit:S4", "factored", None, [4, 3, 2]),
        ("brandoit:A5", "factored", [5, 12], [5, 12]),
        ("brandoit:S4", "regular", None, [24]),
        ("brandoit:FF", "regular", None, [3]),
        ("brandoit:Z16", "regular", None, [16]),
    ],
)
def test_families_are_the_authors_heads(task, family, sizes, want):
    a = get_task(task).automaton
    fam = head_family(a, family, sizes)
    assert fam.sizes == want
    _check(a, fam)


def test_m11_factored_is_four_point_heads():
    a = get_task("brandoit:M11").automaton
    fam = head_family(a, "factored")
    assert fam.sizes == [11, 11, 11, 11]
    _check(a, fam)


@pytest.mark.parametrize("task,subgroups", [("brandoit:S3", 6), ("brandoit:S4", 30)])
def test_block_systems_of_the_regular_action_are_the_subgroups(task, subgroups):
    a = get_task(task).automaton
    # every subgroup but G itself (one block) gives one block system; the trivial subgroup the discrete one
    assert len(block_systems(np.asarray(a.transitions), a.initial)) == subgroups - 1


def test_bad_families_are_refused():
    with pytest.raises(SpecError, match="head family must be one of"):
        head_family(get_task("brandoit:S3").automaton, "cheap")
    with pytest.raises(ConstructionError, match="group automaton"):
        head_family(get_task("brandoit:FF").automaton, "factored")
    with pytest.raises(ConstructionError, match="sizes"):
        head_family(get_task("brandoit:S3").automaton, "factored", [5])
