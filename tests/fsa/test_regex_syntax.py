"""``regex:`` means what it says (fsa/library/regex_syntax.py): the alphabet is the pattern's literal symbols, the
language is Python's ``re.fullmatch`` (an independent oracle, on every word up to a length), ``&`` and ``^`` are
intersection and shuffle (brute force), the measured expansion bounds the NFA automata-lib builds, and what the
pattern cannot mean is refused in one line before anything is built."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError, SpecError
from fsa2rnn.fsa.library import regex_syntax as R

ALPHABET = "abc"


def _words(alphabet: str, n: int):
    for k in range(n + 1):
        yield from ("".join(w) for w in itertools.product(alphabet, repeat=k))


def _language_matches(spec: str, oracle, alphabet: str = ALPHABET, n: int = 5) -> None:
    a = resolve_spec(spec)
    assert list(a.symbols) == sorted(alphabet), (spec, a.symbols)
    for w in _words(alphabet, n):
        assert a.accepts(list(w)) == bool(oracle(w)), (spec, w)


# ---------------------------------------------------------------------------------------------------- patterns
_ATOMS = st.sampled_from(["a", "b", "c", "[ab]", "[a-c]", "[^a]", ".", "()", "[cb]"])
_QUANT = st.sampled_from(["*", "+", "?", "{2}", "{0,2}", "{1,}", "{,2}", "{0}", "{1,3}"])


def _patterns():
    def extend(inner):
        return st.one_of(
            st.tuples(inner, inner).map(lambda t: t[0] + t[1]),
            st.tuples(inner, inner).map(lambda t: f"{t[0]}|{t[1]}"),
            st.tuples(inner, _QUANT).map(lambda t: f"({t[0]}){t[1]}"),
            inner.map(lambda p: f"({p})"),
        )

    return st.recursive(_ATOMS, extend, max_leaves=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_patterns())
def test_a_pattern_is_the_language_python_re_matches(pattern):
    _language_matches(f"regex[abc]:{pattern}", re.compile(pattern).fullmatch)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_patterns(), _patterns(), st.sampled_from("&^"))
def test_intersection_and_shuffle_by_brute_force(left, right, op):
    a, b = re.compile(left).fullmatch, re.compile(right).fullmatch

    def shuffled(w: str) -> bool:
        for mask in range(1 << len(w)):
            u = "".join(c for i, c in enumerate(w) if mask >> i & 1)
            v = "".join(c for i, c in enumerate(w) if not mask >> i & 1)
            if a(u) and b(v):
                return True
        return False

    oracle = (lambda w: a(w) and b(w)) if op == "&" else shuffled
    _language_matches(f"regex[abc]:({left}){op}({right})", oracle, n=4)


@settings(max_examples=40, deadline=None)
@given(_patterns())
def test_the_measured_expansion_bounds_the_nfa_automata_lib_builds(pattern):
    from automata.fa.nfa import NFA

    parsed = R.parse(f"regex[abc]:{pattern}")
    nfa = NFA.from_regex(R.canonical(parsed.tree, parsed.alphabet), input_symbols=set(ALPHABET))
    moves = sum(len(t) for row in nfa.transitions.values() for t in row.values())
    assert len(nfa.states) <= parsed.size.states and moves <= parsed.size.moves, (pattern, parsed.size)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab()[]{}|&^*+?.,-0123\\$x", max_size=12))
def test_any_text_is_an_automaton_or_one_error(text):
    """Fuzzing the parser: a pattern is an automaton over its symbols or a SpecError/LimitExceededError — never
    another exception — and the alphabet never holds a character that is syntax where it stands."""
    try:
        a = resolve_spec("regex:" + text)
    except (SpecError, LimitExceededError) as exc:
        assert "\n" not in str(exc)
        return
    assert set(a.symbols) <= set(text) - set("()|&^*+?{}[]") | {"-", ",", "0", "1", "2", "3", "\\", "$", "{", "}"}


# ---------------------------------------------------------------------------------------------------- alphabets
@pytest.mark.parametrize(
    "spec,symbols",
    [
        ("regex:a{3}", ["a"]),  # quantifier syntax is syntax
        ("regex:a{2,5}b{,3}", ["a", "b"]),
        ("regex:[a-c]x", ["a", "b", "c", "x"]),
        ("regex:\\{a\\}", ["a", "{", "}"]),  # an escaped character is the symbol
        ("regex:\\d", list("0123456789")),
        ("regex:a{0}b", ["a", "b"]),  # a{0} is the empty word, over a still
        ("regex[abc]:a.b", ["a", "b", "c"]),
        ("regex[a-c]:[^a]", ["a", "b", "c"]),
        ("regex[ab\\]]:\\]", ["]", "a", "b"]),
        ("regex:\\x41\\n", ["\n", "A"]),
    ],
)
def test_the_alphabet_is_the_literal_symbols(spec, symbols):
    assert list(resolve_spec(spec).symbols) == symbols


def test_counts_and_negation_mean_what_they_say():
    three = resolve_spec("regex:a{3}")
    assert [three.accepts(list("a" * k)) for k in range(5)] == [False, False, False, True, False]
    assert not resolve_spec("regex:a{0}b").accepts(["a", "b"])  # automata-lib's a{0} accepts "a"
    not_a = resolve_spec("regex[ab]:[^a]")
    assert not_a.accepts(["b"]) and not not_a.accepts(["a"])


@pytest.mark.parametrize(
    "spec,phrase",
    [
        ("regex:[^a]", "needs the alphabet stated: write regex[abc]:PATTERN"),
        ("regex:a.b", "'.' means symbols outside the pattern"),
        ("regex:\\W", "\\W means symbols outside the pattern"),
        ("regex:(a)\\1", "\\1 is a backreference"),
        ("regex:^ab", "'^' is the shuffle operator"),
        ("regex:ab$", "'$' would be an anchor"),
        ("regex:\\bab", "\\b (a word boundary) is not supported"),
        ("regex:(?:ab)", "'(?' (a group with options or a lookaround) is not supported"),
        ("regex:a{x}", "'{' starts a count"),
        ("regex:a{3,2}", "upper bound below its lower bound"),
        ("regex:*a", "'*' has nothing to repeat"),
        ("regex:a||b", "an empty alternative"),
        ("regex:(ab", "a group '(' is never closed"),
        ("regex:ab)", "an unbalanced ')'"),
        ("regex:[ab", "a class '[' is never closed"),
        ("regex:[b-a]", "is reversed"),
        ("regex:\\q", "unknown escape \\q"),
        ("regex[ab]:c", "the symbol 'c' is not in the stated alphabet"),
        ("regex[^a]:a", "cannot be negated"),
        ("regex[ab]a", "must be followed by ':'"),
        ("regex:", "the pattern is empty"),
        ("regex:()", "the pattern has no symbols"),
        ("regex:" + "(" * 150 + "a" + ")" * 150, "nested deeper than"),
    ],
)
def test_what_a_pattern_cannot_mean_is_one_spec_error(spec, phrase):
    with pytest.raises(SpecError) as exc:
        resolve_spec(spec)
    assert phrase in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


@pytest.mark.parametrize(
    "spec,phrase",
    [
        ("regex:a{999999999999999999}", "expands to an NFA of 1,999,999,999,999,999,999 states"),
        ("regex:((a{100}){100}){100}", "expands to an NFA of 2,010,101 states"),
        ("regex:(a{99}&b{99}){99}", "states"),
        ("regex:a{" + "9" * 40 + "}", "has 40 digits"),
        ("regex:[\\x00-\\uffff]", "has 65,536 symbols, over the limit of 4,096"),
    ],
)
def test_a_regex_bomb_is_refused_before_its_nfa_is_built(spec, phrase, monkeypatch):
    import automata.fa.nfa

    def never(*a, **k):
        raise AssertionError("the NFA was built")

    monkeypatch.setattr(automata.fa.nfa.NFA, "from_regex", never)
    with pytest.raises(LimitExceededError, match=re.escape(phrase)):
        resolve_spec(spec)


def test_the_largest_accepted_expansion_builds():
    n = R.MAX_NFA_STATES // 2 - 1  # a literal is two states, the repetition one more
    assert R.parse(f"regex:a{{{n}}}").size.states == R.MAX_NFA_STATES - 1
    with pytest.raises(LimitExceededError):
        R.parse(f"regex:a{{{n + 1}}}")
