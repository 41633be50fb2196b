"""`fsa2rnn reproduce grazzi-table3` (nn/train/reproduce/grazzi_table3.py): jobs built from the presets, the
learning-rate protocol per cell, a tiny table end to end whose figures are read from its runs."""

import json
import statistics

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.train.presets import Preset, get_preset
from fsa2rnn.nn.train.reproduce import REPRODUCTIONS, get_reproduction
from fsa2rnn.nn.train.reproduce.grazzi_table3 import GRIDS, PAPER


def test_table3_jobs_come_from_the_presets_with_the_papers_values_beside():
    assert "grazzi-table3" in REPRODUCTIONS
    rep = get_reproduction("grazzi-table3")
    assert rep.arms == ("0..1", "-1..1") and rep.models == ("deltanet", "mamba") and rep.seeds == (42, 43, 44)
    assert len(PAPER) == 12 and PAPER[("modarith", "deltanet", "-1..1")]["value"] == 0.971
    assert PAPER[("modarith", "deltanet", "-1..1")]["median_value"] == 0.826
    jobs = rep.jobs("small", ["parity", "modarith_brackets"], ["mamba"], ["0..1", "-1..1"], [42, 43])
    assert len(jobs) == 2 * 2 * 2 * len(GRIDS["small"] or (None,)) and len({j.name for j in jobs}) == len(jobs)
    parity = get_preset("grazzi-parity").settings("small", "mamba")
    j = jobs[0]
    assert (j.task, j.model, j.arm, j.seed) == ("parity", "mamba", "0..1", 42)
    assert {k: v for k, v in j.config.items() if k != "eval_lengths"} == {
        **{k: v for k, v in parity.items() if k != "eval_lengths"},
        "task": "grazzi:parity", "model": "mamba", "eig": "0,1", "preset": "grazzi-parity", "scale": "small",
    }  # fmt: skip
    assert list(j.config["eval_lengths"]) == list(parity["eval_lengths"])
    assert j.preset == "grazzi-parity" and j.flags == {"task": "grazzi:parity", "model": "mamba", "eig": "0,1"}
    brackets = [j for j in jobs if j.task == "modarith_brackets"]
    assert {j.config["task"] for j in brackets} == {"grazzi:modarith_brackets"}
    assert {j.config.get("labels") for j in brackets} <= {None, "answer"}  # the bracket task offers no dense labels
    assert rep.paper_cell("parity", "mamba", "0..1") == PAPER[("parity", "mamba", "0..1")]


def test_a_scale_the_preset_has_no_settings_for_is_refused(tmp_path, monkeypatch):
    def no_scale(self, scale, model, task=None):
        raise SpecError(f"--scale must be one of paper, small, got {scale!r}")

    monkeypatch.setattr(Preset, "settings", no_scale)
    with pytest.raises(SpecError, match="grazzi-parity preset has no such scale"):
        get_reproduction("grazzi-table3").jobs("medium", ["parity"], ["deltanet"], ["0..1"], [42])
    res = CliRunner().invoke(main, ["reproduce", "grazzi-table3", "--scale", "medium", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "error:" in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_table3_tiny_end_to_end_from_its_runs(tmp_path):
    out = tmp_path / "t3"
    args = ["reproduce", "grazzi-table3", "--scale", "tiny", "--tasks", "parity", "--models", "deltanet"]
    args += ["--seeds", "42", "--out", str(out), "--json", "--quiet"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    table = json.loads(res.stdout)
    assert json.loads((out / "table.json").read_text()) == table and (out / "plot.png").stat().st_size > 0
    assert [c["arm"] for c in table["cells"]] == ["0..1", "-1..1"]
    md = (out / "table.md").read_text()
    for cell in table["cells"]:
        assert cell["paper"] == PAPER[("parity", "deltanet", cell["arm"])]
        rates = [row["lr"] for row in cell["per_lr"]]
        assert rates == list(GRIDS["tiny"]) and len(cell["seeds"]) == len(rates)
        for rec in cell["seeds"]:  # every figure is the run's own evaluation
            ev = json.loads((out / rec["run"] / "eval.json").read_text())
            cfg = json.loads((out / rec["run"] / "config.json").read_text())["train"]
            assert rec["score"] == ev["range"]["scaled_accuracy"] and rec["lr"] == cfg["lr"]
            assert f"{rec['job']['seed']}: {rec['score']:.3f}" in md
        medians = {row["lr"]: row["median"] for row in cell["per_lr"]}
        chosen = max(rates, key=lambda r: medians[r])  # the first of equal medians
        assert cell["chosen_lr"] == chosen
        scores = [r["score"] for r in cell["seeds"] if r["lr"] == chosen]
        assert cell["best"] == max(scores) and cell["median"] == statistics.median(scores)
        assert cell["aggregate"] == f"{max(scores):.3f}"
    assert "| parity | DeltaNet [−1, 1] | answer · conv on · fla |" in md  # the small preset: convolutions on
    assert "0.001*" in md or "0.01*" in md
    assert all(line.count("|") <= 8 for line in md.splitlines() if line.startswith("|"))  # at most 7 columns
    for cell in table["cells"]:  # each cell's preset and train command, and the version that made the table
        assert cell["preset"]["name"] == "grazzi-parity" and cell["preset"]["scale"] == "tiny"
        assert cell["preset"]["command"].startswith("fsa2rnn train grazzi:parity --preset grazzi-parity --scale tiny")
    assert table["fsa2rnn"]["version"]


def _authors_tokens4(elements: list[int], length: int, blank: int, step, identity: int):
    """The authors' layout of "4 tokens per transition", written from their data code (automl/DeltaProduct,
    state_tracking/src/generate_data.py, groups ``*_tokens_s_token_only_input``): each element followed by 3
    special tokens, the running product repeated over them, then the targets shifted right by 3 (the identity
    first), the word cut at ``length`` tokens."""
    inputs, outputs, acc = [], [], identity
    for x in elements:
        acc = step(acc, x)
        for tok in (x, blank, blank, blank):
            inputs.append(tok)
            outputs.append(acc)
    inputs, outputs = inputs[:length], outputs[:length]
    return inputs, [identity] * 3 + outputs[: length - 3]


def test_s5_tokens4_layout_is_the_authors():
    import torch

    from fsa2rnn.nn.tasks import get_task

    task = get_task("grazzi:S5:tokens4")
    a = task.automaton
    blank = task.vocab.index("[BLANK]")
    for length in (4, 30, 37, 64):
        b = task.sample(16, length, torch.Generator().manual_seed(length))
        for row, target in zip(b.inputs.tolist(), b.targets.tolist()):
            elements = row[0::4]
            inputs, outputs = _authors_tokens4(
                elements, length, blank, lambda q, x: int(a.transitions[x, q]), int(a.initial)
            )
            assert row == inputs and target == outputs


def test_s5_tiny_end_to_end(tmp_path):
    from fsa2rnn.nn.train.reproduce.grazzi_s5 import PAPER as S5_PAPER

    out = tmp_path / "s5"
    args = ["reproduce", "grazzi-s5", "--scale", "tiny", "--tasks", "swaps,tokens4", "--models", "deltanet"]
    args += ["--arm", "-1..1", "--seeds", "42", "--out", str(out), "--json", "--quiet"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    table = json.loads(res.stdout)
    swaps, tokens4 = table["cells"]
    assert (swaps["task"], tokens4["task"]) == ("swaps", "tokens4") and (out / "plot.png").stat().st_size > 0
    assert swaps["paper"]["aggregate"] == S5_PAPER["swaps"]
    for cell, trained in ((swaps, 32), (tokens4, 64)):
        rec = cell["seeds"][0]
        ev = json.loads((out / rec["run"] / "eval.json").read_text())
        cfg = json.loads((out / rec["run"] / "config.json").read_text())["train"]
        assert cfg["train_length"] == f"{trained}..{trained}" and cfg["task"].startswith("grazzi:S5")
        assert rec["sequence_accuracy"] == ev["sequence_accuracy"] and rec["lengths"] == ev["lengths"]
        assert cell["best_curve"] == rec["sequence_accuracy"] and cell["lengths"][0] == trained
    md = (out / "table.md").read_text()
    assert "| tokens4 | DeltaNet [−1, 1] | 1 · 64 |" in md and S5_PAPER["tokens4"] in md
    assert "| tokens4 | DeltaNet [−1, 1] | 42 | 64 / 128 |" in md  # every seed, in the second table


def test_table3_notes_say_which_presets_end_on_their_best_weights():
    rep = get_reproduction("grazzi-table3")
    assert get_preset("grazzi-parity").settings("small", "deltanet").get("keep_best") is True
    assert not get_preset("grazzi-modarith").settings("small", "deltanet").get("keep_best")
    lines = {p: [n for n in rep.notes("small") if n.startswith(f"{p} at this scale")] for p in
             ("grazzi-parity", "grazzi-modarith")}  # fmt: skip
    assert len(lines["grazzi-parity"]) == 1 and len(lines["grazzi-modarith"]) == 1
    assert "ending on the weights validated best at the longest training length" in lines["grazzi-parity"][0]
    assert "validated best" not in lines["grazzi-modarith"][0]
    assert all("the last step's weights" in v[0] for v in lines.values())  # the authors' loop, beside
