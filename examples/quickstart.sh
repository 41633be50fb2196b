#!/usr/bin/env bash
# The main job on builtin examples: inspect, analyze, decompose, compile, run and verify.
set -euo pipefail
OUT=${OUT_DIR:-out}
mkdir -p "$OUT"
set -x
# Inspect: the builtin catalogue, a builtin, a regex, a JSON spec file (see README, "Quickstart")
fsa2rnn --version
fsa2rnn list
fsa2rnn show parity
fsa2rnn show S5:swaps
fsa2rnn show "regex:(a|b)*abb" --dot "$OUT/abb.dot"
fsa2rnn show examples/specs/three_states.json --json
