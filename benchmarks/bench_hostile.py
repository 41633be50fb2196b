"""Seconds and peak memory to refuse each hostile input to every command, beside the target: refused in ≤ 5 s below
500 MiB, exit 2 (1 where the output cannot be written), one line (docs/limits.md, docs/guide/automata.md).

Each input once allocated terabytes, ran without end, lost a file or wrote a half-made run: a 10^23 seed, a batch of
10^12 words, d_model 10^9, 10^8 seeds, an evaluation length of 10^12, an L_max cap of 10^12, η = 10^308, nan
thresholds, an infinite learning rate, empty and text model files, a plot named .txt; regex bombs and huge specs
built before any check, /dev/zero and a FIFO nobody writes as a spec, an endless stdin line, NFSM heads and runs
multiplied past their limits, a spec whose model header safetensors cannot store; an output path that is the input,
outputs into /dev/full, a full disk, closed stdin and stdout; the base install without torch. Every case runs the CLI
in a fresh child process under an address-space limit (:data:`ADDRESS_SPACE`, so that a broken guard fails on its
allocation instead of eating the machine) and a hang timeout; the peak RSS is the child's own (``os.wait4``). A case
states its own exit code, ceilings and what must be left as it was (see refusals.Case);
tests/contracts/test_hostile_inputs.py runs them all (but the one marked ``suite=False``: loading a spec at the
transition limit, seconds of accepted work before its refusal) and asserts all but the seconds.

    python benchmarks/bench_hostile.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import refusals
from refusals import HANG_TIMEOUT, report, run_cli

TARGET_SECONDS = 5.0
TARGET_MIB = 500
#: the child's address space at most (torch is never imported before a refusal; numpy and click need far less)
ADDRESS_SPACE = 2 << 30
BIG = "1000000000000"


@dataclass(frozen=True)
class Case(refusals.Case):
    absent: tuple[str, ...] = ("out",)  #: a refused train must leave no run behind
    suite: bool = True  #: run by the test suite too (False: the benchmark only)


def _refused(name: str, args: tuple[str, ...], expect: str, **kw) -> Case:
    """A case that leaves nothing behind but what it names in ``absent``."""
    return Case(name, args, expect, **{"absent": (), **kw})


#: a sitecustomize that makes ``import torch`` (and matplotlib, the rest of the ``nn`` extra) fail: the base install
NO_TORCH = """import sys
class _NoNN:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "matplotlib"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _NoNN())
"""
_BASE = (("PYTHONPATH", "{dir}/base_install"),)
#: the spec the cases that write beside it must leave as it is
SPEC_TEXT = '{"states": 2, "symbols": ["a"], "transitions": {"a": [1, 0]}}'

REGEX_BOMB = "regex:a{999999999999999999}"
_HEADER = "over the 100,000,000 that safetensors stores"


def _pdssm(spec: str) -> tuple[str, ...]:
    return ("compile", f"{{dir}}/{spec}.json", "--target", "pdssm", "-o", f"{{dir}}/{spec}.safetensors")


_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


#: a reproduction of one run, whose record the damaged-record cases replace
_REP = ("reproduce", "brandoit-table1", "--scale", "tiny", "--tasks", "Z2", "--models", "nfsm", "--arm", "anchored",
        "--seeds", "42")  # fmt: skip
_REP_RUN = "Z2__nfsm__anchored__42"


def _train(*flags: str) -> tuple[str, ...]:
    return ("train", "grazzi:parity", "--out", "{dir}/out", *flags)


CASES = (
    Case("train --model module:Name that does not import", _train("--model", "nosuch_pkg.layers:Layer"),
         "plug-in 'nosuch_pkg.layers:Layer': module 'nosuch_pkg.layers' does not import"),  # fmt: skip
    Case("train --seed 10^23", _train("--seed", "99999999999999999999999"), "'--seed'"),
    Case("train --seed -1", _train("--seed", "-1"), "'--seed': -1 is outside its limit [0, 2^63 − 1]"),
    Case("train --train-length 10^12..10^12", _train("--train-length", f"{BIG}..{BIG}"), "--train-length"),
    Case("train --batch 10^12", _train("--batch", BIG), "'--batch'"),
    Case("train --batch 2^16 (tokens per step)", _train("--batch", "65536"), "tokens per step"),
    Case("train --eval-range 1..10^12", _train("--eval-range", f"1..{BIG}"), "--eval-range"),
    Case("train --d-model 10^9", _train("--d-model", "1000000000"), "'--d-model'"),
    Case("train --d-model 8192 --layers 8", _train("--d-model", "8192", "--layers", "8"), "parameters"),
    Case(
        "train transformer attention",
        _train("--model", "transformer", "--train-length", "4000", "--batch", "64"),
        "attention entries",
    ),  # fmt: skip
    Case("train --seeds 42..10^8", _train("--seeds", "42..100000000"), "over the limit of 1000"),
    Case("train --eval-lengths 10^12", _train("--eval-lengths", BIG), "--eval-lengths"),
    Case("train --eval-lengths × 65", _train("--eval-lengths", ",".join(str(i) for i in range(1, 66))), "65 lengths"),
    Case("train --samples 10^12", _train("--samples", BIG), "'--samples'"),
    Case("train --cap 10^12", _train("--cap", BIG), "'--cap'"),
    Case("train --lr inf", _train("--lr", "inf"), "'--lr': must be a finite number"),
    Case("train --lr 0", _train("--lr", "0"), "'--lr': 0.0 is outside its limit (0, 10]"),
    Case("train --threshold nan", _train("--threshold", "nan"), "'--threshold'"),
    Case("train --dropout 1", _train("--dropout", "1"), "'--dropout'"),
    Case("train --steps 10^12", _train("--steps", BIG), "'--steps'"),
    Case("train --nproc 10^6", _train("--nproc", "1000000"), "'--nproc'"),
    Case("train --out ''", ("train", "grazzi:parity", "--out", ""), "--out is empty"),
    Case(
        "train --out under a file", ("train", "grazzi:parity", "--out", "{dir}/file/run"), "is a file, not a directory"
    ),  # fmt: skip
    Case("train --out a non-run", ("train", "grazzi:parity", "--out", "{dir}/notrun"), "holds other files", ()),
    Case("train --resume on nothing", _train("--resume"), "--resume: '{dir}/out' does not exist"),
    Case("eval --threshold nan", ("eval", "{dir}/run", "--lmax", "--threshold", "nan"), "'--threshold'"),
    Case("eval --lengths 10^12", ("eval", "{dir}/run", "--lengths", BIG), "--lengths"),
    Case("eval --samples 10^12", ("eval", "{dir}/run", "--samples", BIG), "'--samples'"),
    Case("eval --cap 10^12", ("eval", "{dir}/run", "--cap", BIG), "'--cap'"),
    Case("eval ''", ("eval", ""), "RUN is empty"),
    Case("eval a missing run", ("eval", "{dir}/nothing"), "is not a training run: it does not exist"),
    Case("eval an empty config", ("eval", "{dir}/emptyrun"), "the file is empty"),
    Case("compare --cap 10^12", ("compare", "{dir}/run", "--cap", BIG), "'--cap'"),
    Case("compare --length 10^12", ("compare", "{dir}/run", "--length", BIG), "'--length'"),
    Case(
        "compare --words × --length",
        ("compare", "{dir}/run", "--words", "100000", "--length", "1000"),
        "over the limit of 16,777,216",
    ),  # fmt: skip
    Case(
        "compare --plot x.txt",
        ("compare", "{dir}/run", "--plot", "{dir}/x.txt"),
        "extension chooses the format",
        ("x.txt",),
    ),  # fmt: skip
    Case("verify --eta 1e308", ("verify", "{dir}/m.safetensors", "--eta", "1e308"), "'--eta'"),
    Case("verify --eta nan", ("verify", "{dir}/m.safetensors", "--eta", "nan"), "'--eta'"),
    Case(
        "verify --plot drift.txt",
        ("verify", "{dir}/m.safetensors", "--eta", "0.1", "--plot", "{dir}/drift.txt"),
        "extension chooses the format",
        ("drift.txt",),
    ),  # fmt: skip
    Case("verify --length 10^12", ("verify", "{dir}/m.safetensors", "--length", BIG), "'--length'"),
    Case("verify --cap 10^12", ("verify", "{dir}/m.safetensors", "--eta", "0", "--lmax", "--cap", BIG), "'--cap'"),
    Case("verify an empty model file", ("verify", "{dir}/empty.safetensors"), "is empty (0 bytes)"),
    Case("verify a text file", ("verify", "{dir}/text.safetensors"), "is not a safetensors file"),
    # ---------------------------------------------------------------- bounds before work
    _refused("show regex a{10^18}", ("show", REGEX_BOMB), "expands to an NFA of 1,999,999,999,999,999,999 states"),
    Case("train on regex a{10^18}", ("train", REGEX_BOMB, "--out", "{dir}/out"), "expands to an NFA"),
    _refused("show regex ((a{100}){100}){100}", ("show", "regex:((a{100}){100}){100}"), "2,010,101 states"),
    _refused("decompose regex (a{99}&b{99}){99}", ("decompose", "regex:(a{99}&b{99}){99}"), "expands to an NFA"),
    _refused("show regex class of 65,536 symbols", ("show", "regex:[\\x00-\\uffff]"), "over the limit of 4,096"),
    _refused("show regex 40-digit count", ("show", "regex:a{" + "9" * 40 + "}"), "has 40 digits"),
    _refused("show /dev/zero", ("show", "/dev/zero"), "is not a JSON object: it starts with the byte b'\\x00'"),
    _refused("show a FIFO nobody writes", ("show", "{dir}/fifo"), "nothing arrived for 3 s"),
    _refused("show a 6M-state spec (3 symbols)", ("show", "{dir}/six_million.json"),
             "6,000,000 states × 2 symbols = 12,000,000 transitions"),  # refused at its second row  # fmt: skip
    _refused("show a spec of 10^7 + 1 names", ("show", "{dir}/many_names.json"), "names 10,000,001"),
    _refused("run < /dev/zero", ("run", "{dir}/m.safetensors"), "stdin line 1 is longer than the limit",
             stdin="/dev/zero"),  # fmt: skip
    Case("train --nfsm-heads 10^8x10^8", _train("--model", "nfsm", "--nfsm-heads", "99999999x99999999"),
         "the number of heads 99999999 is outside its limit"),  # fmt: skip
    Case("train --seeds 0..999 --lr-grid paper", _train("--seeds", "0..999", "--lr-grid", "paper"), "4,000 runs"),
    _refused("compile: model header over safetensors'", _pdssm("long_names"), _HEADER,
             absent=("long_names.safetensors",)),  # fmt: skip
    _refused("compile pdssm: a spec at the limit", _pdssm("at_limit"), _HEADER, absent=("at_limit.safetensors",),
             mib=1100, seconds=25, suite=False),  # fmt: skip
    # ---------------------------------------------------------------- regex: means what it says
    _refused("show regex [^a] without an alphabet", ("show", "regex:[^a]"), "write regex[abc]:PATTERN"),
    _refused("show regex a.b without an alphabet", ("show", "regex:a.b"), "write regex[abc]:PATTERN"),
    _refused("show regex backreference", ("show", "regex:(a)\\1"), "\\1 is a backreference"),
    _refused("show regex with anchors", ("show", "regex:^ab$"), "'^' is the shuffle operator"),
    Case("train regex[ab]:c", ("train", "regex[ab]:c", "--out", "{dir}/out"), "not in the stated alphabet"),
    # ---------------------------------------------------------------- nothing lost
    _refused("show spec.json --dot spec.json", ("show", "{dir}/spec.json", "--dot", "{dir}/spec.json"),
             "the extension chooses the format", kept=(("spec.json", SPEC_TEXT),)),  # fmt: skip
    _refused("show spec.dot --dot spec.dot", ("show", "{dir}/spec.dot", "--dot", "{dir}/spec.dot"),
             "writing it would destroy it", kept=(("spec.dot", SPEC_TEXT),)),  # fmt: skip
    _refused("show --dot x.txt", ("show", "parity", "--dot", "{dir}/x.txt"), "use one of .dot", absent=("x.txt",)),
    _refused("compile -o m.bin", ("compile", "parity", "--target", "nfsm", "-o", "{dir}/m.bin"), "use .safetensors",
             absent=("m.bin",)),  # fmt: skip
    _refused("compile -o new > /dev/full", ("compile", "parity", "--target", "diagonal", "-o", "{dir}/new.safetensors"),
             "cannot write the output: No space left on device", code=1, stdout="/dev/full",
             absent=("new.safetensors",)),  # fmt: skip
    _refused("show --dot new > /dev/full", ("show", "parity", "--dot", "{dir}/new.dot"), "No space left on device",
             code=1, stdout="/dev/full", absent=("new.dot",)),  # fmt: skip
    _refused("compile onto a full disk", ("compile", "S4", "--target", "householder", "-o", "{dir}/old.safetensors"),
             "cannot write '{dir}/old.safetensors': File too large", fsize=4096,
             kept=(("old.safetensors", "OLD"),)),  # fmt: skip
    *(
        _refused(f"{args[0]} with stdout closed", args, "stdout is closed", code=1, stdout="closed")
        for args in (("show", "parity"), ("list",), ("tasks",), ("verify", "{dir}/m.safetensors"),
                     ("decompose", "parity"), ("theorems", "--only", "brandoit.thm4.1.i"),
                     ("run", "{dir}/m.safetensors"))
    ),  # fmt: skip
    _refused("run with stdin closed", ("run", "{dir}/m.safetensors"), "stdin is closed", stdin="closed"),
    _refused("reproduce --out ''", ("reproduce", "grazzi-table3", "--out", ""), "--out is empty"),
    # ---------------------------------------------------------------- damaged records (reproduce, --resume)
    *(
        _refused(f"reproduce --table-only, a record {what}", (*_REP, "--out", f"{{dir}}/{folder}", "--table-only"),
                 f"'{{dir}}/{folder}/runs/{_REP_RUN}/reproduce.json' {expect}",
                 kept=((f"{folder}/table.json", "OLD"), (f"{folder}/table.md", "OLD")),
                 absent=(f"{folder}/.lock",))
        for what, folder, expect in (("not UTF-8", "rep_bytes", "is damaged: byte 1 is not UTF-8"),
                                     ("not JSON", "rep_json", "is damaged: not valid JSON"),
                                     ("without figures", "rep_keys", "is damaged: not the record of a finished"),
                                     ("of another run", "rep_other", "is damaged: the record of another run"))
    ),  # fmt: skip
    Case("train --resume, metrics.jsonl not UTF-8", ("train", "--out", "{dir}/resumerun", "--resume"),
         "'{dir}/resumerun/metrics.jsonl' is damaged: byte 16 is not UTF-8", absent=("resumerun/.lock",)),  # fmt: skip
    Case("train --resume, a metrics.jsonl line not JSON", ("train", "--out", "{dir}/tornrun", "--resume"),
         "'{dir}/tornrun/metrics.jsonl' is damaged: line 1 is not a JSON record", absent=("tornrun/.lock",)),
    # ---------------------------------------------------------------- options that cannot apply, budgets, names
    Case("train --min-lr 10 --lr 0.001", _train("--lr", "0.001", "--min-lr", "10"), "--min-lr 10 is above --lr 0.001"),
    _refused("verify a symbolic link loop", ("verify", "{dir}/loop"), "a loop of symbolic links"),
    _refused("show a typo", ("show", "parit"), "did you mean 'parity'?"),
    Case("train a task typo", ("train", "gazzi:parity", "--out", "{dir}/out"), "did you mean 'grazzi:parity'"),
    _refused("compile --target typo", ("compile", "parity", "--target", "nfms", "-o", "{dir}/t.safetensors"),
             "did you mean 'nfsm'?"),  # fmt: skip
    _refused("reproduce a table typo", ("reproduce", "grazzi-tabel3", "--out", "{dir}/rep"), "did you mean",
             absent=("rep",)),  # fmt: skip
    # ---------------------------------------------------------------- the base install (no torch)
    *(
        _refused(f"{args[0]} without torch", args, "needs torch, which this installation lacks: pip install "
                 "'fsa2rnn[nn]'", env=_BASE, absent=("out",))
        for args in (_train(), ("eval", "{dir}/run"), ("theorems",), ("verify", "{dir}/m.safetensors", "--dtype",
                                                                        "float32"))
    ),  # fmt: skip
)


def write_fixtures(folder: Path) -> None:
    """The files the cases name: a compiled parity model, an empty and a text 'model', a file to nest under, a
    directory that is not a run, a run whose config is empty, and a run directory whose contents are never read (the
    refusals come first); a FIFO, specs over the limits, a spec to protect, an old model a full disk must keep, a
    loop of symbolic links, and the base install's import blocker."""
    import os

    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec

    compile_householder(resolve_spec("parity")).save(folder / "m.safetensors")
    (folder / "empty.safetensors").write_bytes(b"")
    (folder / "text.safetensors").write_text("this is a text file, not a model\n" * 4)
    (folder / "file").write_text("a file")
    (folder / "notrun").mkdir()
    (folder / "notrun" / "thesis.tex").write_text("mine")
    run_config = '{"format": "fsa2rnn.train_run/1", "train": {"task": "grazzi:parity"}}'
    for run, config in (("run", run_config), ("emptyrun", "")):
        (folder / run).mkdir()
        (folder / run / "config.json").write_text(config)
        (folder / run / "model.safetensors").write_bytes(b"")
    for run, metrics in (("resumerun", b'{"step": 1}\n{"st\xffep": 2}\n'), ("tornrun", b'{"step": 1\n{"step": 2}\n')):
        (folder / run).mkdir()
        (folder / run / "config.json").write_text(run_config)
        (folder / run / "model.safetensors").write_bytes(b"")
        (folder / run / "metrics.jsonl").write_bytes(metrics)
    job = {"task": "Z2", "model": "nfsm", "arm": "anchored", "seed": 42}
    record = {"run": f"runs/{_REP_RUN}", "seconds": 1.0}
    for rep, text in (("rep_bytes", b'{\xff}'), ("rep_json", b'{"job": '), ("rep_keys", b'{"job": {}}'),
                      ("rep_other", json.dumps({**record, "job": {**job, "seed": 7}, "status": "done"}).encode())):
        (folder / rep / "runs" / _REP_RUN).mkdir(parents=True)
        (folder / rep / "runs" / _REP_RUN / "reproduce.json").write_bytes(text)
        for name in ("table.json", "table.md"):
            (folder / rep / name).write_text("OLD")
    os.mkfifo(folder / "fifo")
    for name in ("spec.json", "spec.dot"):
        (folder / name).write_text(SPEC_TEXT)
    (folder / "old.safetensors").write_text("OLD")
    os.symlink(folder / "loop", folder / "loop")
    (folder / "base_install").mkdir()
    (folder / "base_install" / "sitecustomize.py").write_text(NO_TORCH)
    write_big_specs(folder)


def write_big_specs(folder: Path, at_limit: bool = False) -> None:
    """Specs whose counts exceed the limits, made of entries that parsing would turn into an object each (numbers
    above 256, strings: about 40–60 bytes an entry): 6,000,000 states over 3 symbols, transitions first; 10,000,001
    state names; 1,000 states whose 50,000-character names overflow a model header. ``at_limit``: also 10 symbols ×
    1,000,000 states (10^7 transitions, the limit), whose model header is over safetensors' 100 MB."""
    n = 6_000_000
    row = "[" + "1000," * (n - 1) + "0]"
    (folder / "six_million.json").write_text(f'{{"transitions": {{"a": {row}, "b": {row}, "c": {row}}}, '
                                             f'"symbols": ["a", "b", "c"], "states": {n}}}')  # fmt: skip
    (folder / "many_names.json").write_text('{"states": [' + '"q",' * 10_000_000 + '"q"], "symbols": ["a"], '
                                            '"transitions": {"a": [0]}}')  # fmt: skip
    names = ", ".join(f'"{i:04d}{"x" * 50_000}"' for i in range(1000))
    row = "[" + ",".join(map(str, range(1, 1000))) + ",0]"
    (folder / "long_names.json").write_text(f'{{"states": [{names}], "symbols": ["a"], "transitions": {{"a": {row}}}}}')
    if at_limit:
        n, k = 1_000_000, 10
        row = "[" + ",".join(map(str, range(1, n))) + ",0]"
        rows = ", ".join(f'"s{i}": {row}' for i in range(k))
        symbols = ", ".join(f'"s{i}"' for i in range(k))
        (folder / "at_limit.json").write_text(f'{{"states": {n}, "symbols": [{symbols}], "transitions": {{{rows}}}}}')


def run_limited(case: Case, timeout: float = HANG_TIMEOUT) -> tuple[int, str, float, float]:
    """The case's ``fsa2rnn ARGS`` (resolved) in a fresh process under :data:`ADDRESS_SPACE`, with its stdin, stdout,
    file-size limit and environment: (exit code, stderr, seconds, peak MiB)."""
    return run_cli(list(case.args), address_space=ADDRESS_SPACE, timeout=timeout, env={**_ONE_THREAD, **dict(case.env)},
                   stdin=case.stdin, stdout=case.stdout, fsize=case.fsize)  # fmt: skip


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        write_fixtures(Path(d))
        write_big_specs(Path(d), at_limit=True)
        ok = report(CASES, Path(d), run_limited, target_seconds=TARGET_SECONDS, target_mib=TARGET_MIB)
    print(json.dumps({"cases": len(CASES), "all_ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
