"""Data parallelism through torchrun (DDP: NCCL on GPUs, gloo on CPU), and the rules that make N processes compute
what one process computes with the whole batch:

- every rank draws the *same* seeded global batch and keeps its slice (rows rank·B/N … (rank+1)·B/N − 1);
- the loss is the sum over the rank's target positions divided by the *global* number of target positions, times
  N (DDP averages gradients over ranks), so the averaged gradient is the gradient of the global mean;
- randomness inside the model (Gumbel noise of the NFSM, dropout) is drawn from torch's global generator, seeded
  alike on every rank at every step, for the *global* batch shape, and sliced (:class:`GlobalBatchDropout`, the
  NFSM's ``batch_rows``) — so it does not depend on the rank.

Only rank 0 writes files. ``fsa2rnn train --nproc N`` runs ``torchrun --nproc-per-node N -m fsa2rnn.cli.train``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    def rows(self, batch: int) -> tuple[int, int]:
        """This rank's rows of a global batch."""
        share = batch // self.size
        return self.rank * share, (self.rank + 1) * share


def launched_by_torchrun() -> bool:
    return "WORLD_SIZE" in os.environ and "RANK" in os.environ and int(os.environ["WORLD_SIZE"]) > 1


def init_world(device: str) -> World:
    """Join the process group torchrun set up (gloo on CPU, NCCL on CUDA); a single process otherwise."""
    if not launched_by_torchrun():
        return World()
    import torch.distributed as dist

    world = World(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", 0)))
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return world


def close_world(world: World) -> None:
    if world.size > 1:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()


def all_sum(values: torch.Tensor, world: World) -> torch.Tensor:
    """The sum over ranks of a float64 tensor (itself in a single process)."""
    if world.size == 1:
        return values
    import torch.distributed as dist

    out = values.clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out


def barrier(world: World) -> None:
    if world.size > 1:
        import torch.distributed as dist

        dist.barrier()


def broadcast_flag(flag: bool, world: World, device: torch.device) -> bool:
    """Rank 0's boolean on every rank."""
    if world.size == 1:
        return flag
    import torch.distributed as dist

    t = torch.tensor([1.0 if flag else 0.0], dtype=torch.float64, device=device)
    dist.broadcast(t, src=0)
    return bool(t.item())


class GlobalBatchDropout(nn.Module):
    """Dropout whose mask is drawn for the global batch (``rows = (global batch, start, stop)``) and sliced, so
    that it does not depend on the rank; the same scaling as ``nn.Dropout``."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = float(p)
        self.rows: tuple[int, int, int] | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        total, lo, hi = self.rows or (x.shape[0], 0, x.shape[0])
        keep = torch.rand((total, *x.shape[1:]), dtype=torch.float32)[lo:hi].to(x.device) >= self.p
        return x * keep.to(x.dtype) / (1.0 - self.p)


def use_global_batch_randomness(model: nn.Module) -> list[nn.Module]:
    """Replace the model's ``nn.Dropout`` modules by :class:`GlobalBatchDropout`; return every module whose
    randomness is drawn per global batch (set their rows with :func:`set_rows`)."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Dropout:
                setattr(parent, name, GlobalBatchDropout(child.p))
    return [m for m in model.modules() if isinstance(m, GlobalBatchDropout) or hasattr(m, "batch_rows")]


def set_rows(modules: list[nn.Module], rows: tuple[int, int, int]) -> None:
    for m in modules:
        if isinstance(m, GlobalBatchDropout):
            m.rows = rows
        else:
            m.batch_rows = rows
