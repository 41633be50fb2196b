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

# Algebra: the transition monoid, Green's classes, subgroups, realizability (README, "Analyze")
fsa2rnn analyze S5:swaps
fsa2rnn analyze T4 --json > "$OUT/T4.analyze.json"

# Krohn–Rhodes: the holonomy cascade of T4, emulation verified (README, "Decompose")
fsa2rnn decompose T4 --dot "$OUT/T4.cascade.dot"

# Exact weights: Householder products for S5 (Theorem 3) and for T4 via its cascade (Theorem 4)
fsa2rnn compile S5 --target householder -o "$OUT/S5.householder.safetensors"
fsa2rnn compile T4 --target householder -o "$OUT/T4.householder.safetensors"
# ... and a Neural Finite-State Machine, with its per-dtype margin certificate
fsa2rnn compile T4 --target nfsm -o "$OUT/T4.nfsm.safetensors"

# Run words through a compiled model (one JSON array of symbols per line) and verify it
printf '%s\n' '["(0 1)", "(0 1 2)", "(3 4)"]' '["(0 4)"]' | fsa2rnn run "$OUT/S5.householder.safetensors"
fsa2rnn verify "$OUT/S5.householder.safetensors" --spec S5 --length 10000
fsa2rnn verify "$OUT/T4.householder.safetensors" --spec T4 --length 10000
fsa2rnn verify "$OUT/T4.nfsm.safetensors" --spec T4 --dtype bfloat16 --length 10000
