"""DEXML losses: hand-computed values, Decoupled Softmax vs InfoNCE, SoftTop-k's implicit gradient."""

import math

import pytest
import torch
import torch.nn.functional as F

from ehi.train.losses.dexml import (
    decoupled_softmax_loss,
    pair_decoupled_softmax,
    pair_soft_topk,
    soft_topk,
    soft_topk_loss,
)

PAIR_FORMS = {"decoupled_softmax": pair_decoupled_softmax, "soft_topk": pair_soft_topk}

gen = torch.Generator().manual_seed(0)


def _rand(*shape, grad=True):
    return torch.randn(*shape, generator=gen, dtype=torch.float64).requires_grad_(grad)


def _infonce_multi(scores, positive, temperature=1.0):
    """Multi-positive InfoNCE: every positive shares one denominator with all candidates."""
    logp = torch.log_softmax(scores / temperature, dim=1)
    return -((logp * positive).sum(1) / positive.sum(1)).mean()


def test_decoupled_softmax_hand_computed_and_differs_from_infonce_with_two_positives():
    scores = torch.tensor([[math.log(2.0), 0.0, 0.0]], dtype=torch.float64)
    positive = torch.tensor([[True, True, False]])
    # decoupled: ½[−log(2/(2+1)) − log(1/(1+1))] = ½ log 3
    assert decoupled_softmax_loss(scores, positive, temperature=1.0).item() == pytest.approx(0.5 * math.log(3))
    # InfoNCE: ½[−log(2/4) − log(1/4)] = 3/2 log 2; the two positives compete for one denominator
    assert _infonce_multi(scores, positive).item() == pytest.approx(1.5 * math.log(2))


def test_decoupled_softmax_equals_infonce_with_one_positive():
    scores, positive = _rand(4, 6, grad=False), torch.zeros(4, 6, dtype=torch.bool)
    positive[torch.arange(4), torch.tensor([0, 3, 5, 1])] = True
    want = _infonce_multi(scores, positive, temperature=0.1)
    torch.testing.assert_close(decoupled_softmax_loss(scores, positive, temperature=0.1), want)


def test_decoupled_softmax_skips_queries_without_positives_and_is_stable():
    scores = torch.tensor([[1.0, 0.0], [0.0, 5.0], [3.0, 2.0]], dtype=torch.float64, requires_grad=True)
    positive = torch.tensor([[True, False], [False, False], [True, True]])
    # query 2 has no positive (ignored); query 3 has no negative (every positive wins: 0)
    loss = decoupled_softmax_loss(scores, positive, temperature=1.0)
    assert loss.item() == pytest.approx(math.log(1 + math.exp(-1.0)) / 2)
    loss.backward()
    assert torch.isfinite(scores.grad).all()
    big = decoupled_softmax_loss(scores.detach() * 1e4, positive, temperature=0.01)
    assert torch.isfinite(big)


def test_decoupled_softmax_gradcheck():
    positive = torch.tensor([[True, True, False, False], [False, True, False, False]])
    negatives = torch.tensor([[True, True, True, False], [True, True, True, True]])
    fn = lambda s: decoupled_softmax_loss(s, positive, 0.5, negative_mask=negatives)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (_rand(2, 4),))


def test_soft_topk_hand_values_and_row_sums():
    x = torch.tensor([[0.7, -0.7], [1.0, 1.0]], dtype=torch.float64)
    out = soft_topk(x, k=1, alpha=2.0)
    # symmetric rows: t = 0 for the first (σ(1.4) + σ(−1.4) = 1), equal halves for the second
    torch.testing.assert_close(out, torch.tensor([[torch.sigmoid(torch.tensor(1.4)).item(),
                                                   torch.sigmoid(torch.tensor(-1.4)).item()], [0.5, 0.5]],
                                                 dtype=torch.float64))
    x = _rand(5, 9, grad=False)
    for k in (1, 3, 7.5):
        torch.testing.assert_close(soft_topk(x, k, alpha=3.0).sum(1), torch.full((5,), float(k), dtype=torch.float64))
    valid = torch.rand(5, 9, generator=gen) < 0.7
    valid[:, :4] = True
    out = soft_topk(x.masked_fill(~valid, float("-inf")), 2, alpha=3.0, valid=valid)
    assert (out[~valid] == 0).all()
    torch.testing.assert_close(out.sum(1), torch.full((5,), 2.0, dtype=torch.float64))


def test_soft_topk_saturates_when_k_exceeds_the_candidates():
    out = soft_topk(torch.tensor([[0.3, -0.2]], dtype=torch.float64), k=2, alpha=1.0)
    torch.testing.assert_close(out, torch.ones(1, 2, dtype=torch.float64))


def test_soft_topk_loss_hand_value():
    scores = torch.tensor([[2.0, -2.0]], dtype=torch.float64)
    positive = torch.tensor([[True, False]])
    # k = 1 with two symmetric scores: t = 0, loss = −log σ(2)
    assert soft_topk_loss(scores, positive, k=1, alpha=1.0).item() == pytest.approx(math.log(1 + math.exp(-2)))


def test_soft_topk_gradcheck_implicit_threshold():
    valid = torch.ones(3, 6, dtype=torch.bool)
    valid[1, 4:] = False
    assert torch.autograd.gradcheck(lambda x: soft_topk(x, 2, alpha=1.5), (_rand(3, 6),))
    assert torch.autograd.gradcheck(lambda x: soft_topk(x, 2, alpha=1.5, valid=valid), (_rand(3, 6),))
    positive = torch.zeros(3, 6, dtype=torch.bool)
    positive[:, 0] = positive[2, 3] = True
    assert torch.autograd.gradcheck(lambda s: soft_topk_loss(s, positive, k=2, alpha=2.0), (_rand(3, 6),))


def _finite_difference_grad(fn, x, eps=1e-6):
    grad = torch.zeros_like(x)
    for i in range(x.numel()):
        step = torch.zeros_like(x).view(-1)
        step[i] = eps
        step = step.view_as(x)
        grad.view(-1)[i] = (fn(x + step) - fn(x - step)) / (2 * eps)
    return grad


def test_detached_threshold_gives_the_wrong_gradient():
    x = _rand(2, 5, grad=False)
    weights = _rand(2, 5, grad=False)
    objective = lambda y: (weights * y).sum()  # noqa: E731
    want = _finite_difference_grad(lambda v: objective(soft_topk(v, 2, alpha=1.5)), x)
    grads = {}
    for detach in (False, True):
        v = x.clone().requires_grad_(True)
        objective(soft_topk(v, 2, alpha=1.5, detach_threshold=detach)).backward()
        grads[detach] = v.grad
    torch.testing.assert_close(grads[False], want, atol=1e-7, rtol=1e-5)
    assert (grads[True] - want).abs().max() > 1e-2
    # the row sums are constant (= k), so their true gradient is zero; a detached t misses that
    v = x.clone().requires_grad_(True)
    soft_topk(v, 2, alpha=1.5).sum().backward()
    assert v.grad.abs().max() < 1e-10
    detached = lambda v: soft_topk(v, 2, alpha=1.5, detach_threshold=True)  # noqa: E731
    assert not torch.autograd.gradcheck(detached, (x.clone().requires_grad_(True),), raise_exception=False)


@pytest.mark.parametrize("name", sorted(PAIR_FORMS))
def test_registry_adapters_take_the_pair_layout(name):
    # the call ehi.train.losses.objective.ehi_loss makes: fn(pos (n,), sim (n, m), mask (n, m), margin=, temperature=)
    sim = _rand(3, 5)
    pos = sim.diagonal()[:3]
    mask = ~torch.eye(3, 5, dtype=torch.bool)
    loss = PAIR_FORMS[name](pos, sim, mask, margin=0.1, temperature=0.5)
    assert loss.ndim == 0 and torch.isfinite(loss)
    loss.backward()
    assert torch.isfinite(sim.grad).all() and sim.grad.abs().sum() > 0


def test_pair_decoupled_softmax_is_pair_infonce():
    sim = _rand(3, 5, grad=False)
    pos = sim.diagonal()[:3]
    mask = ~torch.eye(3, 5, dtype=torch.bool)
    logits = torch.cat([pos[:, None], sim.masked_fill(~mask, -torch.inf)], 1) / 0.05
    want = F.cross_entropy(logits, torch.zeros(3, dtype=torch.long))
    got = pair_decoupled_softmax(pos, sim, mask, margin=None, temperature=0.05)
    torch.testing.assert_close(got, want)


def test_softmax_shares_the_denominator_among_a_querys_positives_and_decoupled_does_not():
    """Two rows of one query (positives in columns 0 and 1) plus one other query; column 2, 3 negatives."""
    from ehi.train.losses.objective import ehi_loss

    q = F.normalize(_rand(3, 4, grad=False), dim=1)
    q[1] = q[0]  # rows 0 and 1: the same query, one row per positive
    d = F.normalize(_rand(5, 4, grad=False), dim=1)
    pos_idx = torch.tensor([0, 1, 2])
    positive = torch.tensor([[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 1, 0, 0]], dtype=torch.bool)
    mask = ~positive  # valid negatives: everything not judged relevant
    s = (q @ d.T).float() / 0.05  # ehi_loss scores in float32
    shared = torch.stack([-(s[0, 0] - torch.logsumexp(s[0], 0)), -(s[1, 1] - torch.logsumexp(s[1], 0)),
                          -(s[2, 2] - torch.logsumexp(s[2], 0))]).mean()  # every column in the denominator
    decoupled = torch.stack([-(s[0, 0] - torch.logsumexp(s[0, [0, 2, 3, 4]], 0)),
                             -(s[1, 1] - torch.logsumexp(s[1, [1, 2, 3, 4]], 0)),
                             -(s[2, 2] - torch.logsumexp(s[2, [0, 1, 2, 3, 4]], 0))]).mean()
    kw = dict(lambda_indexing=0.0, lambda_intra_leaf=0.0, temperature=0.05, positive_mask=positive)
    torch.testing.assert_close(ehi_loss(q, d, pos_idx, mask, siamese_loss="softmax", **kw)["siamese"], shared)
    for name in ("infonce", "decoupled_softmax"):
        torch.testing.assert_close(ehi_loss(q, d, pos_idx, mask, siamese_loss=name, **kw)["siamese"], decoupled)
    assert not torch.allclose(shared, decoupled)
    with pytest.raises(ValueError, match="positive_mask"):
        ehi_loss(q, d, pos_idx, mask, siamese_loss="softmax", lambda_indexing=0.0, lambda_intra_leaf=0.0)
