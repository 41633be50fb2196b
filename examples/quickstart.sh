#!/usr/bin/env bash
# The main job on builtin examples: inspect, analyze, decompose, compile, run and verify.
set -euo pipefail
OUT=${OUT_DIR:-out}
mkdir -p "$OUT"
set -x
fsa2rnn show parity
