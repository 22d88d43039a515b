"""Multi-label losses of DEXML ("Dual-Encoders for Extreme Multi-label Classification", Gupta et
al., ICLR 2024) as options for L_siamese: Decoupled Softmax and SoftTop-k.

The core functions take a score matrix ``scores`` (B, C) (B queries against C candidates) and a
``positive_mask`` (B, C); an optional ``negative_mask`` (B, C) says which of the other candidates
count as negatives (default: every non-positive), so padding or unjudged columns can be left out.

* Decoupled Softmax: each positive competes with the negatives only. InfoNCE puts every positive
  in one denominator, so with two positives the loss keeps pushing one down to lift the other and
  never rewards a confident prediction of both; decoupling removes that competition.
* SoftTop-k: ``σ(α(x_i + t))`` with the per-row shift t chosen so the values sum to k, a smooth
  "is item i in the top k" (the authors' construction, after T. Ahle's StackExchange answer).
  t depends on every score; its gradient comes from the implicit function theorem
  (:class:`_TopkThreshold`). Treating t as a constant gives a wrong gradient (see the tests).

:func:`pair_decoupled_softmax` and :func:`pair_soft_topk` adapt both to the pair layout of
:data:`ehi.train.losses.registry.SIAMESE_LOSSES` (whose names are :mod:`ehi.train.losses.names`).
"""

from __future__ import annotations

import torch


def decoupled_softmax_loss(scores: torch.Tensor, positive_mask: torch.Tensor, temperature: float = 0.05,
                           negative_mask: torch.Tensor | None = None) -> torch.Tensor:
    """−(1/|P|) Σ_p log(e^{s_p/τ} / (e^{s_p/τ} + Σ_n e^{s_n/τ})), averaged over queries with a positive.

    A query without negatives scores 0 (every positive already wins); a batch without positives
    gives 0, not NaN.
    """
    pos = positive_mask.bool()
    neg = ~pos if negative_mask is None else negative_mask.bool() & ~pos
    logits = scores / temperature  # (B, C)
    # logsumexp over the negatives; an all -inf row gives -inf, and logaddexp(a, -inf) = a
    lse_neg = torch.logsumexp(logits.masked_fill(~neg, float("-inf")), dim=1, keepdim=True)  # (B, 1)
    per_pos = torch.logaddexp(logits, lse_neg) - logits  # (B, C) −log of each positive's share
    n_pos = pos.sum(1)  # (B,)
    per_query = torch.where(pos, per_pos, torch.zeros_like(per_pos)).sum(1) / n_pos.clamp(min=1)
    has_pos = (n_pos > 0).to(per_query.dtype)
    return (per_query * has_pos).sum() / has_pos.sum().clamp(min=1.0)


def _sigmoid_slope(z: torch.Tensor) -> torch.Tensor:
    # σ'(z) = σ(z)σ(−z): unlike σ(1 − σ) it keeps its precision where σ is close to 1
    return torch.sigmoid(z) * torch.sigmoid(-z)


class _TopkThreshold(torch.autograd.Function):
    """The shift t (B,) with Σ_i σ(α(x_i + t)) = k over the valid entries of each row.

    Forward: bisection (the sum rises monotonically with t). Backward: differentiating the
    constraint gives α Σ_i σ'_i (dx_i + dt) = 0, so dt/dx_i = −σ'_i / Σ_j σ'_j (α cancels).
    """

    @staticmethod
    def forward(ctx, x, valid, k, alpha, n_iter):
        with torch.no_grad():
            n_valid = valid.sum(1, keepdim=True).to(x.dtype)  # (B, 1)
            big = x.abs().masked_fill(~valid, 0).amax(1, keepdim=True)  # (B, 1)
            # at ±(big + slack) every σ is within e^{-α·slack} of 0 or 1, which brackets k
            slack = (torch.log(n_valid.clamp(min=2)) + 40.0) / alpha
            lo, hi = -big - slack, big + slack  # (B, 1)
            for _ in range(n_iter):
                mid = (lo + hi) / 2
                total = (torch.sigmoid(alpha * (x + mid)) * valid).sum(1, keepdim=True)
                below = total < k
                lo, hi = torch.where(below, mid, lo), torch.where(below, hi, mid)
            t = (lo + hi) / 2
        ctx.save_for_backward(x, valid, t)
        ctx.alpha = alpha
        return t[:, 0]

    @staticmethod
    def backward(ctx, grad_t):
        x, valid, t = ctx.saved_tensors
        slope = _sigmoid_slope(ctx.alpha * (x + t)) * valid  # (B, C)
        dt_dx = -slope / slope.sum(1, keepdim=True).clamp(min=torch.finfo(x.dtype).tiny)
        return grad_t[:, None] * dt_dx, None, None, None, None


def soft_topk(x: torch.Tensor, k: float, alpha: float = 1.0, valid: torch.Tensor | None = None,
              n_iter: int = 64, detach_threshold: bool = False) -> torch.Tensor:
    """σ(α(x_i + t)) per row of x (B, C), t such that each row sums to k over its valid entries.

    Invalid entries (``valid`` False) are left out of the sum and return 0. A row with no more than
    k valid entries cannot reach k: it saturates at 1 (t at the top of the bracket, gradient ~0).
    64 bisection steps halve a bracket of width ~2(|x|max + 40/α) to below float64 resolution.
    ``detach_threshold=True`` treats t as a constant: the wrong gradient, kept only for the test
    that shows the difference.
    """
    if k <= 0:
        raise ValueError(f"soft_topk needs k > 0, got {k}")
    valid = torch.ones_like(x, dtype=torch.bool) if valid is None else valid.bool()
    x = torch.where(valid, x, torch.zeros_like(x))  # keeps ±inf out of the arithmetic
    if detach_threshold:
        t = _TopkThreshold.apply(x.detach(), valid, float(k), float(alpha), n_iter)
    else:
        t = _TopkThreshold.apply(x, valid, float(k), float(alpha), n_iter)
    out = torch.sigmoid(alpha * (x + t[:, None]))  # (B, C)
    return torch.where(valid, out, torch.zeros_like(out))


def soft_topk_loss(scores: torch.Tensor, positive_mask: torch.Tensor, k: float = 5, alpha: float = 20.0,
                   valid: torch.Tensor | None = None) -> torch.Tensor:
    """−mean over positives of log soft_topk(scores)_p: each positive should land in the top k.

    log σ is computed as −softplus(−z) so a positive far outside the top k gives a large finite
    loss instead of log(0).
    """
    pos = positive_mask.bool()
    valid = torch.ones_like(pos) if valid is None else valid.bool() | pos
    x = torch.where(valid, scores, torch.zeros_like(scores))
    t = _TopkThreshold.apply(x, valid, float(k), float(alpha), 64)  # (B,)
    log_op = -torch.nn.functional.softplus(-alpha * (x + t[:, None]))  # (B, C) log σ(α(x + t))
    return -(log_op * pos).sum() / pos.sum().clamp(min=1)


# ---- adapters for ehi.train.losses.registry.SIAMESE_LOSSES ---------------------------------------------------
# The registry's layout is one row per (query, positive) pair: pos (n,) the pair's similarity,
# neg (n, m) similarities to every batch document, mask (n, m) the valid negatives (documents not
# judged relevant to the query; the pair's own positive and the query's other positives are
# masked out). In that layout each positive already competes with negatives only, so
# "decoupled_softmax" equals the registry's "infonce" up to the weighting of multi-positive
# queries; the general (B, C) functions above are the multi-positive form.

def _pair_scores(pos, neg, mask):
    scores = torch.cat([pos[:, None], neg], dim=1)  # (n, 1 + m): the positive first
    first = torch.zeros_like(scores, dtype=torch.bool)
    first[:, 0] = True
    return scores, first, torch.cat([first[:, :1], mask.bool()], dim=1)


def pair_decoupled_softmax(pos, neg, mask, *, margin: float | None = None, temperature: float = 0.05):
    """Registry form of :func:`decoupled_softmax_loss` (``margin`` unused)."""
    scores, positive, candidates = _pair_scores(pos, neg, mask)
    return decoupled_softmax_loss(scores, positive, temperature, negative_mask=candidates)


def pair_soft_topk(pos, neg, mask, *, margin: float | None = None, temperature: float = 0.05,
                   k: float = 5, alpha: float | None = None):
    """Registry form of :func:`soft_topk_loss` over the positive and its valid negatives.

    ``alpha`` defaults to 1/temperature, so the config's one temperature knob sets the sharpness
    of both softmax-style losses (cosines span [−1, 1]; α = 20 makes that span 40 logits).
    """
    scores, positive, candidates = _pair_scores(pos, neg, mask)
    alpha = 1.0 / temperature if alpha is None else alpha
    return soft_topk_loss(scores, positive, k=k, alpha=alpha, valid=candidates)


__all__ = ["decoupled_softmax_loss", "soft_topk", "soft_topk_loss", "pair_decoupled_softmax", "pair_soft_topk"]
