"""fla's DeltaNet against fsa2rnn's DeltaNet on parity at the eigenvalue ranges [−1, 1] and [0, 1], side by side: both
L_max (docs/your-own-model.md, "fla's layers"). NOT YET RUN ON A GPU: the first run on a CUDA machine is its first
result.

The GPU machine reaches no registry: carry these wheels in the working tree (e.g. wheels/) and install them with
``pip install --no-index --find-links wheels flash-linear-attention``: flash-linear-attention (fla), its
dependencies transformers (5.x), tokenizers, huggingface-hub, safetensors, einops, and a click ≥ 8.2 (fla's
transformers pulls it); triton comes with the machine's torch.

``--dry-run`` prints the plan (four runs) and exits; ``--device cpu`` runs the same plan against the CPU stand-in of
fla's signatures (tests/plugins/fsa2rnn_toys/fla_standin.py, a few steps: the pipeline, not a result). The suite
runs both (tests/nn/test_gpu_fla.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RANGES = ("-1,1", "0,1")
GPU = dict(steps=1500, batch=32, d_model=32, layers=1, mlp_ratio=0.0, lr=1e-2, train_length="3..40",
           eval_lengths=[40, 256], samples=512, cap=1024, labels="answer", warmup=0.05)  # fmt: skip
CPU = dict(steps=4, batch=4, d_model=8, layers=1, mlp_ratio=0.0, lr=1e-2, train_length="3..8", eval_lengths=[8],
           samples=8, cap=16, labels="answer")  # fmt: skip


def plan(device: str) -> list[tuple[str, str, dict]]:
    """(name, eig, TrainConfig fields) of every run: fla's DeltaNet and fsa2rnn's at each range."""
    base = GPU if device == "cuda" else CPU
    fla = "fla:DeltaNet" if device == "cuda" else "fla-standin"
    out = []
    for eig in RANGES:
        out.append((f"fla DeltaNet [{eig}]", eig, {**base, "model": fla, "eig": eig} if device == "cuda"
                    else {**base, "model": fla, "model_args": {"eig": eig}}))  # fmt: skip
        out.append((f"fsa2rnn DeltaNet [{eig}]", eig, {**base, "model": "deltanet", "eig": eig, "short_conv": False}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    runs = plan(args.device)
    if args.dry_run:
        for name, _, cfg in runs:
            print(f"{name}: {json.dumps(cfg)}")
        return 0
    from fsa2rnn.nn.train import TrainConfig, train

    if args.device == "cpu":  # the stand-in, registered under a name (no fla, no GPU)
        sys.path.insert(0, str(ROOT / "tests" / "plugins"))
        from fsa2rnn_toys import fla_standin

        from fsa2rnn.nn.layers import register_layer
        from fsa2rnn.nn.layers.fla_adapter import fla_factory

        register_layer("fla-standin", fla_factory("DeltaNet", module=fla_standin), replace=True)
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, _, cfg) in enumerate(runs):
            result = train(TrainConfig(task="grazzi:parity", device=args.device, progress=False, **cfg),
                           Path(tmp) / str(i), plugins=(cfg["model"],))  # fmt: skip
            lm = result.get("l_max")
            print(f"{name}: L_max {lm if lm is not None else ('≥ cap' if result.get('l_max_capped') else '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
