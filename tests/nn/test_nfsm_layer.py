"""The NFSM layer: multi-head keyed scans, outputs, and the straight-through Gumbel-softmax training hook."""

import numpy as np
import pytest
import torch

from fsa2rnn.nn.nfsm import NFSMLayer, straight_through_tables

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _layer(seed=0, heads=(3, 5, 2), n_keys=4):
    torch.manual_seed(seed)
    return NFSMLayer(n_keys, list(heads), embed_dim=6, out_dim=7).double()


def test_scan_matches_per_head_recurrence():
    layer = _layer()
    bank = layer.key_tables().numpy()
    keys = torch.randint(0, 4, (3, 40), generator=torch.Generator().manual_seed(1))
    h0 = torch.tensor([1, 4, 0])
    idx = layer.scan(keys, h0).numpy()
    for i in range(3):  # independent oracle: each head alone, step by step
        h = int(h0[i])
        for t in range(40):
            h = int(bank[keys[0, t], i, h])
            assert idx[0, t, i] == h
    for impl in ("naive", "torch", "triton"):
        assert np.array_equal(layer.scan(keys, h0, impl=impl).numpy(), idx)
    lengths = torch.tensor([40, 3, 0])
    padded = layer.scan(keys, h0, lengths).numpy()
    assert np.array_equal(padded[1, :3], idx[1, :3]) and np.all(padded[1, 3:] == -1) and np.all(padded[2] == -1)


def test_tables_are_argmax_of_head_blocks():
    layer = _layer(heads=(4,))
    logits = layer.key_logits().detach()
    assert np.array_equal(layer.key_tables()[:, 0].numpy(), logits.view(4, 4, 4).argmax(-1).numpy())


def test_straight_through_forward_is_hard_and_gradients_flow():
    theta = torch.randn(2, 5, 5, requires_grad=True, generator=torch.Generator().manual_seed(2))
    tables = straight_through_tables(theta, tau=0.5, noise=False)
    assert torch.equal(tables.detach(), torch.nn.functional.one_hot(theta.argmax(-1), 5).double().to(tables.dtype))
    (tables * torch.randn(2, 5, 5)).sum().backward()
    assert theta.grad is not None and theta.grad.abs().sum() > 0


def test_relaxed_forward_equals_exact_layer_and_trains():
    layer = _layer(seed=3)
    keys = torch.randint(0, 4, (2, 12), generator=torch.Generator().manual_seed(4))
    h0 = torch.tensor([0, 2, 1])
    out, idx = layer.relaxed_forward(keys, h0, tau=1.0, noise=False)
    exact = layer.scan(keys, h0)
    assert torch.equal(idx, exact)
    assert torch.allclose(out, layer.outputs(exact))
    out.pow(2).sum().backward()
    for p in (layer.logits.weight, layer.embedding.weight):
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0


def test_relaxed_forward_with_gumbel_noise_is_seeded():
    layer = _layer(seed=5)
    keys = torch.randint(0, 4, (1, 8), generator=torch.Generator().manual_seed(6))
    h0 = torch.tensor([0, 0, 0])
    a, ia = layer.relaxed_forward(keys, h0, generator=torch.Generator().manual_seed(7))
    b, ib = layer.relaxed_forward(keys, h0, generator=torch.Generator().manual_seed(7))
    assert torch.equal(ia, ib) and torch.equal(a, b)
