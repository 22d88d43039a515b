"""The summary's section on EHI inside FAISS, from export_matched.parquet only.

Ratios are EHI / peer from one run (systems timed in interleaved rounds). Targets of the issue:
through FAISS, EHI's batched QPS >= 0.98 x IVF-Flat's at equal fraction scored (SciFact and the
largest synthetic N) and its single-query p99 <= 1.2 x IVF's; EHI with PQ leaves >= 0.8 x
ScaNN-AH's QPS at equal Recall@100 on the largest N.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.export import EHI_PQ, IVF_PQ

QPS_TARGET, P99_TARGET, PQ_TARGET = 0.98, 1.2, 0.8


def _f(x, digits=2) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def _md(rows: list[dict]) -> str:
    df = pd.DataFrame(rows).fillna("–")
    head = "| " + " | ".join(map(str, df.columns)) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "".join("| " + " | ".join(map(str, r)) + " |\n" for r in df.itertuples(index=False))


def _best(at: pd.DataFrame, names) -> tuple[str, pd.Series | None]:
    """The system of ``names`` with the highest QPS at this target (None if none reached it)."""
    sub = at[at.index.isin(names) & np.isfinite(at.qps)]
    if sub.empty:
        return "–", None
    name = sub.qps.idxmax()
    return name, sub.loc[name]


def _float_table(m: pd.DataFrame, verdicts: dict, dataset: str) -> str:
    rows = []
    for t, at in m[m.matched_at == "frac_scored"].groupby("target"):
        at = at.set_index("system")
        get = lambda s, c: at.loc[s, c] if s in at.index else np.nan  # noqa: E731
        qps_ratio = get("ehi-faiss", "qps") / get("faiss-ivf", "qps")
        p99_ratio = get("ehi-faiss", "p99_ms") / get("faiss-ivf", "p99_ms")
        rows.append({"fraction scored": t, "EHI recall": _f(get("ehi-faiss", "recall"), 3),
                     "ehi-faiss QPS": _f(get("ehi-faiss", "qps"), 0),
                     "faiss-ivf QPS": _f(get("faiss-ivf", "qps"), 0), "ehi-faiss/ivf QPS": _f(qps_ratio),
                     "ehi-faiss p50/p99 ms": f"{_f(get('ehi-faiss', 'p50_ms'), 3)}/{_f(get('ehi-faiss', 'p99_ms'), 3)}",
                     "faiss-ivf p50/p99 ms": f"{_f(get('faiss-ivf', 'p50_ms'), 3)}/{_f(get('faiss-ivf', 'p99_ms'), 3)}",
                     "p50, p99 ratio (EHI/ivf)": f"{_f(get('ehi-faiss', 'p50_ms') / get('faiss-ivf', 'p50_ms'))}, "
                                                 f"{_f(p99_ratio)}"})
        verdicts.setdefault("qps", []).append((dataset, t, qps_ratio))
        verdicts.setdefault("p99", []).append((dataset, t, p99_ratio))
    return _md(rows)


def _pq_table(m: pd.DataFrame, verdicts: dict, dataset: str, largest: bool) -> str:
    rows = []
    for t, at in m[m.matched_at == "recall"].groupby("target"):
        at = at.set_index("system")
        row = {"Recall@100": t}
        for name in EHI_PQ + IVF_PQ + ("scann-ah",):
            if name in at.index:
                row[f"{name} QPS (frac)"] = f"{_f(at.loc[name, 'qps'], 0)} ({_f(at.loc[name, 'frac_scored'], 3)})"
        ehi_name, ehi = _best(at, EHI_PQ)
        ivf_name, ivf = _best(at, IVF_PQ)
        scann = at.loc["scann-ah"] if "scann-ah" in at.index else None
        ratio = lambda a, b: a.qps / b.qps if a is not None and b is not None else np.nan  # noqa: E731
        row["best EHI-PQ"] = ehi_name
        row["EHI-PQ/scann-ah QPS"] = _f(ratio(ehi, scann))
        row[f"EHI-PQ/IVF-PQ QPS (best: {ivf_name})"] = _f(ratio(ehi, ivf))
        rows.append(row)
        if largest:
            verdicts.setdefault("pq", []).append((dataset, t, ratio(ehi, scann)))
    return _md(rows)


def _verdict(values, threshold, higher_is_better=True) -> str:
    finite = [(d, t, r) for d, t, r in values if np.isfinite(r)]
    if not finite:
        return "not measured (no point reached the targets)"
    met = [(r >= threshold) if higher_is_better else (r <= threshold) for _, _, r in finite]
    worst = (min if higher_is_better else max)(finite, key=lambda v: v[2])
    state = "met" if all(met) else ("partly met" if any(met) else "not met")
    return f"{state} ({sum(met)}/{len(met)} points; worst {worst[2]:.2f} on {worst[0]} at {worst[1]})"


def section(matched: pd.DataFrame, source: str = "export_matched.parquet") -> str:
    """Markdown for summary.md: per dataset, the float32 table at equal fraction and the PQ table at
    equal recall, then the verdicts on the issue's targets. ``source``: the table's path, named."""
    text, verdicts = ["\n## 8. EHI inside FAISS: the exported index and compressed leaves\n",
                      f"From `{source}` (N up to {matched.n_docs.max():,}).\n",
                      "A tree of height 1 with about sqrt(N) leaves, exported with `ehi.search.exported.ExportedIndex` "
                      "(IVF-Flat with centroids [A_i, c_i] and queries [x, 1]) and searched by FAISS alone with "
                      "nprobe = beam (`ehi-faiss`), against FAISS IVF-Flat on k-means lists (`faiss-ivf`, as many lists). Compressed "
                      "leaves at 2 bits per dimension: `ehi-pq4`/`ehi-pq8` (the export with 4-bit fast-scan / "
                      "8-bit PQ codes, no residuals), `faiss-ivfpq4`/`faiss-ivfpq8` (IVF-PQ on faiss-ivf's lists, "
                      "residual codes), `-rr` = the best 1,000 re-scored exactly, `scann-ah` (AH, 1,000 re-scored). "
                      "Batched QPS and single-query latency both on one thread.\n"], {}
    largest = matched.n_docs.max()
    for dataset, m in matched.groupby("dataset", sort=False):
        n = int(m.n_docs.iloc[0])
        text.append(f"\n### {dataset}: N = {n:,}\n\nFloat32 leaves at equal fraction scored:\n\n")
        text.append(_float_table(m, verdicts, dataset))
        text.append("\nCompressed leaves at equal Recall@100 (QPS, fraction scored in brackets):\n\n")
        text.append(_pq_table(m, verdicts, dataset, largest=n == largest))
    text.append("\nTargets (issue 16):\n\n"
                f"- EHI through FAISS, batched QPS ≥ {QPS_TARGET} × IVF-Flat at equal fraction: "
                f"{_verdict(verdicts.get('qps', []), QPS_TARGET)}.\n"
                f"- EHI through FAISS, single-query p99 ≤ {P99_TARGET} × IVF-Flat's at equal fraction: "
                f"{_verdict(verdicts.get('p99', []), P99_TARGET, higher_is_better=False)}.\n"
                f"- EHI-PQ QPS ≥ {PQ_TARGET} × ScaNN-AH at equal Recall@100 (N = {largest:,}): "
                f"{_verdict(verdicts.get('pq', []), PQ_TARGET)}.\n")
    return "".join(text)
