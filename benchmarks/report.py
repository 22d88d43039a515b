"""summary.md and the figures, from the benchmark Parquet tables only (no measurement here).

Every number in the summary is read from the tables; the verdicts on the issue's targets are
computed from them, so a rerun on another machine rewrites them.
"""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.io import read_provenance, read_table

from benchmarks import export_report
from benchmarks.search import FRAC_TARGETS, RECALL_TARGETS
from benchmarks.systems import PEERS as _PEERS

PEERS = list(_PEERS)  # the registry's ANNS kinds, exact search aside


def _f(x, digits=2) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def _md(df: pd.DataFrame) -> str:
    head = "| " + " | ".join(map(str, df.columns)) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "".join("| " + " | ".join(map(str, r)) + " |\n" for r in df.itertuples(index=False))


def _search_tables(matched: pd.DataFrame, curves: pd.DataFrame) -> tuple[str, dict]:
    text, verdict = [], {}
    for dataset, m in matched.groupby("dataset", sort=False):
        c = curves[curves.dataset == dataset].iloc[0]
        text.append(f"\n### {dataset}: N = {c.n_docs:,}, {c.n_queries:,} queries, Recall@{c.k} vs exact\n")
        text.append(f"EHI tree H={c.tree_height}, B={c.tree_branching} ({c.tree_branching ** c.tree_height} leaves), "
                    f"largest leaf {_f(curves[(curves.dataset == dataset) & (curves.system == 'ehi-scan')].max_leaf_over_mean.max(), 1)}"
                    f"x the mean; trained {c.tree_train_steps} steps in {_f(c.tree_train_seconds, 0)} s.\n")
        for kind, targets, label in (("recall", RECALL_TARGETS, "Recall@100"), ("frac_scored", FRAC_TARGETS, "fraction scored")):
            sub = m[m.matched_at == kind]
            rows, lat_rows = [], []
            for t in targets:
                at = sub[sub.target == t].set_index("system")
                e = at.loc["ehi-scan"] if "ehi-scan" in at.index else None
                row = {label: t, "EHI QPS": _f(e.qps if e is not None else np.nan, 0),
                       "EHI p50/p99 ms": f"{_f(e.p50_ms if e is not None else np.nan)}/{_f(e.p99_ms if e is not None else np.nan)}"}
                if kind == "recall":
                    row["EHI frac"] = _f(e.frac_scored if e is not None else np.nan, 3)
                else:
                    row["EHI recall"] = _f(e.recall if e is not None else np.nan, 3)
                for p in PEERS:
                    if p in at.index:
                        r = at.loc[p]
                        row[f"{p} QPS (EHI/x)"] = f"{_f(r.qps, 0)} ({_f(r.qps_ratio)})"
                if "best-peer" in at.index:
                    b = at.loc["best-peer"]
                    row["EHI/best peer QPS"] = f"{_f(b.qps_ratio)} ({b.best_peer})"
                    row["p50, p99 ratio"] = f"{_f(b.p50_ratio)}, {_f(b.p99_ratio)}"
                rows.append(row)
                lat = {label: t, "EHI p50/p99 ms": row["EHI p50/p99 ms"]}
                for p in PEERS:
                    if p in at.index:
                        r = at.loc[p]
                        lat[f"{p} p50/p99 ms (EHI/x)"] = (f"{_f(r.p50_ms)}/{_f(r.p99_ms)} "
                                                          f"({_f(r.p50_ratio)}/{_f(r.p99_ratio)})")
                lat_rows.append(lat)
                key = "ivf" if kind == "frac_scored" else "best"
                ratio = at.loc["faiss-ivf"].qps_ratio if kind == "frac_scored" and "faiss-ivf" in at.index else \
                    (at.loc["best-peer"].qps_ratio if "best-peer" in at.index else np.nan)
                verdict.setdefault(key, []).append((dataset, t, ratio))
            text.append(f"\nAt equal {label}: batched QPS (median of rounds; ratio = EHI / system, > 1 favours "
                        "EHI):\n\n" + _md(pd.DataFrame(rows).fillna("–")))
            text.append(f"\nAt equal {label}: single-query latency p50/p99 in ms (ratio EHI / system, < 1 favours "
                        "EHI):\n\n" + _md(pd.DataFrame(lat_rows).fillna("–")))
    return "".join(text), verdict


def _verdict(values, threshold) -> str:
    finite = [(d, t, r) for d, t, r in values if np.isfinite(r)]
    if not finite:
        return "not measured"
    met = [r >= threshold for _, _, r in finite]
    lo = min(finite, key=lambda v: v[2])
    state = "met" if all(met) else ("partly met" if any(met) else "not met")
    return f"{state} ({sum(met)}/{len(met)} points; lowest {lo[2]:.2f} on {lo[0]} at {lo[1]})"


# EHI's own searches in the benchmark: its tree's colour and marker, told apart by the line
EHI_LINES = {"ehi-scan": "-", "ehi-torch": ":"}


def _look(system: str) -> dict:
    """A system's look in the reports (ehi.report.styles): a peer its kind on EHI's vectors, EHI's searches its tree."""
    from ehi.report.styles import style
    look = style("ehi+tree" if system in EHI_LINES else f"ehi+{system}")
    return {"color": look["color"], "marker": look["marker"], "linestyle": EHI_LINES.get(system, "-")}


def _figures(out: Path, curves: pd.DataFrame, beams: pd.DataFrame | None) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from matplotlib.ticker import PercentFormatter
    names = []
    datasets = list(curves.dataset.unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for system, c in curves[curves.dataset == dataset].groupby("system", sort=False):
            c = c.sort_values("recall")
            ax.plot(c.recall, c.qps, ms=4, label=system, **_look(system))
        ax.set(xlabel="Recall@100 against exact search", ylabel="queries/s (batched, log scale)", yscale="log",
               title=f"{dataset}: speed against recall")
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"The search benchmark: every index over the same vectors, {curves.threads.iloc[0]} search threads", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "search_qps_recall.png", dpi=120)
    plt.close(fig)
    names.append("search_qps_recall.png")
    if beams is not None and len(beams):
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        for n, b in beams.groupby("n_docs"):
            a1.plot(b.beam, b.seconds_per_query * 1e6, marker="o", label=f"N={n:,} measured")
            a1.plot(b.beam, b.model_seconds * 1e6, ls="--", color=a1.lines[-1].get_color(), label=f"N={n:,} model")
        a1.set(xscale="log", yscale="log", xlabel="beam b", ylabel="µs per query (batched)",
               title="EHI search cost against beam")
        a1.legend(fontsize=7)
        for frac in (0.01, 0.05, 0.2):
            rows = []
            for n, b in beams.groupby("n_docs"):
                target = frac * b.branching.iloc[0] ** b.height.iloc[0]
                rows.append(b.iloc[int(np.argmin(np.abs(np.log(b.beam / target))))])
            r = pd.DataFrame(rows)
            a2.plot(r.n_docs, r.seconds_per_query * 1e6, marker="o", label=f"beam nearest {frac:.0%} of leaves")
        ns = np.array(sorted(beams.n_docs.unique()), dtype=float)
        first = beams[beams.n_docs == ns[0]].seconds_per_query.min() * 1e6
        a2.plot(ns, first * ns / ns[0], ls=":", color="grey", label="slope 1 (cost ∝ N)")
        a2.set(xscale="log", yscale="log", xlabel="N", ylabel="µs per query (batched)", title="EHI search cost against N")
        a2.legend(fontsize=7)
        for ax in (a1, a2):
            ax.grid(alpha=0.3, which="both")
        fig.tight_layout()
        fig.savefig(out / "scaling.png", dpi=120)
        plt.close(fig)
        names.append("scaling.png")
    return names


def trained_section(out: Path) -> list[str]:
    """Section 9 from trained/trained.md, which ``python -m benchmarks.trained`` writes by hand on
    one pipeline run's artefacts (no rule runs it: it needs a trained run), its headings demoted."""
    md = out / "trained" / "trained.md"
    if not md.exists():
        return []
    body = md.read_text().split("\n", 1)[1].replace("\n## ", "\n### ")
    return ["\n## 9. The trained indexes at equal quality\n",
            "From [trained/trained.md](trained/trained.md); figure: [trained/trained_pareto.png]"
            "(trained/trained_pareto.png).\n", body]


def write(out: str | Path, quick: bool = False, notes: str | Path | None = None) -> Path:
    """Render summary.md (+ figures) in ``out``; ``notes`` is a hand-written Markdown file appended."""
    out = Path(out)
    curves = read_table(out / "search_curves.parquet")
    matched = read_table(out / "search_matched.parquet")
    builds = read_table(out / "build.parquet")
    beams = read_table(out / "beams.parquet")
    coef = read_provenance(out / "beams.parquet")
    steps = read_table(out / "training_steps.parquet")
    reidx = read_table(out / "reindex.parquet")
    eff = read_table(out / "efficiency.parquet")
    prov = read_provenance(out / "search_curves.parquet")
    figures = _figures(out, curves, beams)

    search_md, v = _search_tables(matched, curves)
    lines = [
        "# Benchmarks: EHI against FAISS and ScaNN\n",
        f"Mode: {'quick' if quick else 'full'}; git {prov.get('git_commit', '?')[:10]}; "
        f"{platform.machine()}, {curves.threads.iloc[0]} threads for batched search; generated by `snakemake --cores 2 benchmarks"
        f"{' --config quick=true' if quick else ''}` from the Parquet tables next to this file.\n",
        "The machine is shared (another training job runs niced beside it), so absolute timings are noisy: "
        "compare the ratios, which come from one run with systems measured in interleaved rounds, "
        "and read every timing as a median of repeated runs.\n",
        "**EHI here** is a `TreeIndexer` trained label-free on the frozen vectors (L_neighbour of "
        "`ehi.train.losses.objective`: each document shares its path with an embedding-space nearest neighbour; "
        "`standardize_` init; exact 10-NN within a sample of 20,000 documents; AdamW, lr 1e-2, "
        "512 anchors per step; the paper's indexer, not `per_node`), searched through "
        "`ehi.search.exported.ExportedIndex`, the package's one EHI search: EHI's beam search (numpy router) picks "
        "the leaves, a FAISS IVF-Flat index whose inverted lists are EHI's leaves scans them with "
        "`search_preassigned`. Peers: FAISS IVF-Flat (sqrt(N) lists, spherical k-means), FAISS HNSW "
        "(M=16, efConstruction=100), ScaNN with exact scores in sqrt(N) partitions (`scann`) and with "
        "anisotropic hashing + exact re-ranking of 1,000 (`scann-ah`). Batched QPS uses all threads; "
        "latency is single-query calls on one thread. Values at a target recall or fraction are "
        "interpolated (log-linear) between the two measured sweep points around it, never extrapolated "
        "(– = the sweep never reached it).\n",
        "## 1. Search at matched quality\n", search_md,
    ]
    # 2. build
    b = builds.pivot_table(index="n_docs", columns="system", values="build_seconds")
    rows = []
    for n, r in b.iterrows():
        row = {"N": f"{n:,}", "EHI assign (s)": _f(r["ehi-scan"], 2)}
        for p in PEERS:
            if p in r.index:
                row[f"{p} (s) (EHI/x)"] = f"{_f(r[p], 2)} ({_f(r['ehi-scan'] / r[p])})"
        t = builds[(builds.n_docs == n) & (builds.system == "ehi-scan")].tree_train_seconds
        row["EHI tree training (s)"] = _f(t.iloc[0], 0) if len(t) else "–"
        rows.append(row)
    lines += ["\n## 2. Index build time against N\n",
              "EHI's build = one forward pass of the trained tree over the corpus + filling the lists; peers: "
              "FAISS IVF training + add, HNSW insertion, ScaNN build. Medians of 3 builds below the largest N, "
              "one build at it. The tree's own training is a separate column (it replaces k-means, but "
              "is part of EHI's training, not of indexing).\n\n", _md(pd.DataFrame(rows))]
    # 3. training
    s = steps.pivot_table(index="setting", columns="model", values="seconds_per_step")
    r_in = s.loc["in-batch", "ehi"] / s.loc["in-batch", "de"]
    r_hard = s.loc["hard", "ehi"] / s.loc["hard", "de"]
    ri = reidx.iloc[0]
    lines += ["\n## 3. Training overhead\n",
              f"MiniLM, batch {steps.batch_size.iloc[0]}, median of {steps.steps.iloc[0]} steps each, EHI and DE "
              "alternating step by step on the same batches (train_step + backward + AdamW).\n\n",
              _md(pd.DataFrame([{"setting": k, "EHI s/step": _f(s.loc[k, "ehi"], 3), "DE s/step": _f(s.loc[k, "de"], 3),
                                 "EHI/DE": _f(s.loc[k, "ehi"] / s.loc[k, "de"], 3)} for k in s.index])),
              f"\n`in-batch`: identical documents for both, the difference is the tree and its losses. `hard`: each "
              "mines its own 2 hard negatives per pair (EHI: the positive's leaf; DE: its exact top-20).\n\n"
              f"Re-indexing pass over {int(ri.n_docs):,} documents: corpus embedding {_f(ri.embed_seconds, 2)} s, tree "
              f"assignment {_f(ri.assign_seconds, 4)} s ({_f(100 * ri.assign_share, 3)}% of the pass). "
              "The paper: 2–3 of 25 minutes for 8.8M documents (8–12%); here the tree's share is far smaller "
              "because embedding with a transformer on a CPU costs about 10^4 times a 2-level tree pass per document.\n"]
    # 4. efficiency
    e = eff.iloc[0]
    lines += ["\n## 4. Hardware efficiency of the encoder training step\n",
              f"FLOPs counted by `FlopCounterMode` (one step: {e.flops_per_step / 1e9:.1f} GFLOP, batch "
              f"{int(e.batch_size)} queries + {int(e.batch_size)} documents, {int(e.tokens)} real of "
              f"{int(e.padded_tokens)} padded tokens); peak = a 2048³ float32 `torch.matmul` in the same run: "
              f"{e.matmul_peak_flops / 1e9:.1f} GFLOP/s on {int(e.threads)} thread(s).\n\n",
              _md(pd.DataFrame([{"achieved GFLOP/s (whole step)": _f(e.achieved_flops / 1e9, 1),
                                 "efficiency (whole step)": f"{100 * e.efficiency:.1f}%",
                                 "efficiency (forward+backward only)": f"{100 * e.fwd_bwd_efficiency:.1f}%",
                                 "tokenize s": _f(e.tokenize_seconds, 3), "forward s": _f(e.forward_seconds, 3),
                                 "backward s": _f(e.backward_seconds, 3), "optimizer s": _f(e.optimizer_seconds, 3)}]))]
    # 5. scaling
    worst = beams.loc[beams.measured_over_model.sub(1).abs().idxmax()]
    lines += ["\n## 5. Scaling of EHI's search cost\n",
              f"![scaling](scaling.png)\n\nModel fitted over every (N, beam) (non-negative least squares, relative error): "
              f"seconds/query = {coef.get('c0_seconds', np.nan):.2e} + {coef.get('c_route_seconds_per_flop', np.nan):.2e}·H·b·B·d' "
              f"+ {coef.get('c_scan_seconds_per_flop', np.nan):.2e}·n_scored·d. The scan term corresponds to "
              f"{_f(1e-9 / max(coef.get('c_scan_seconds_per_flop', np.nan), 1e-30), 1)} G multiply-adds/s. Measured/model "
              f"ranges from {_f(beams.measured_over_model.min())} to {_f(beams.measured_over_model.max())}; the "
              f"largest departure is at N={int(worst.n_docs):,}, beam {int(worst.beam)} "
              f"(measured {worst.seconds_per_query * 1e6:.0f} µs vs model {worst.model_seconds * 1e6:.0f} µs).\n\n",
              _md(beams.assign(us=(beams.seconds_per_query * 1e6).round(1), model_us=(beams.model_seconds * 1e6).round(1),
                               route_us=(beams.route_seconds * 1e6).round(1), frac=(beams.n_scored / beams.n_docs).round(4),
                               ratio=beams.measured_over_model.round(2))
                  [["n_docs", "beam", "frac", "route_us", "us", "model_us", "ratio"]])]
    # 6. memory
    big = builds[builds.n_docs == builds.n_docs.max()]
    lines += [f"\n## 6. Peak memory at N = {big.n_docs.iloc[0]:,} (raw vectors {big.raw_bytes.iloc[0] / 2**20:.0f} MiB)\n",
              "Each index built and searched in its own process; RSS includes the interpreter with torch, faiss "
              "and scann loaded and the vectors themselves. `index/raw` = (RSS after build − RSS after making "
              "the vectors) / raw size.\n\n",
              _md(pd.DataFrame([{"system": r.system, "peak RSS build (MiB)": f"{r.peak_rss_build / 2**20:.0f}",
                                 "peak RSS search (MiB)": f"{r.peak_rss_search / 2**20:.0f}",
                                 "peak/raw": _f(r.peak_rss_search_over_raw), "index/raw": _f(r.index_over_raw)}
                                for r in big.itertuples()]))]
    if (out / "stream.parquet").exists():  # the load check: bounded memory over a long stream
        st = read_table(out / "stream.parquet")
        lines += ["\n## 7. Load: a stream of queries through `ehi search`\n",
                  f"`ehi search --queries-file` in a fresh process per stream length, batches of "
                  f"{st.batch_size.iloc[0]}, on a {st.n_docs.iloc[0]:,}-document synthetic index ({st.encoder.iloc[0]} "
                  "encoder: memory, not quality, is measured); peak RSS of the process. Bounded memory = "
                  "the peak does not grow with the stream.\n\n",
                  _md(pd.DataFrame([{"queries": f"{r.n_queries:,}", "seconds": _f(r.seconds, 1),
                                     "queries/s": f"{r.queries_per_second:.0f}", "peak RSS (MiB)": f"{r.peak_rss_mib:.0f}",
                                     "peak / shortest stream's": _f(r.peak_over_shortest, 3)} for r in st.itertuples()]))]
    export = next((p for p in (out / "export_matched.parquet", out / "quick" / "export_matched.parquet")
                   if p.exists()), None)  # a full summary falls back to the quick run's, saying so
    if export is not None:
        lines += [export_report.section(read_table(export), source=export.relative_to(out).as_posix())]
    lines += trained_section(out)
    # verdicts
    lines += ["\n## Targets\n",
              f"- EHI QPS ≥ FAISS IVF-Flat at equal fraction scored: {_verdict(v.get('ivf', []), 1.0)}.\n",
              f"- EHI QPS ≥ 0.8 × best peer at equal recall: {_verdict(v.get('best', []), 0.8)}.\n",
              f"- EHI step ≤ 1.10 × DE step: in-batch {_f(r_in, 3)} ({'met' if r_in <= 1.10 else 'not met'}), "
              f"hard negatives {_f(r_hard, 3)} ({'met' if r_hard <= 1.10 else 'not met'}).\n",
              f"- Training step ≥ 40% of matmul peak on CPU: {100 * e.efficiency:.1f}% "
              f"({'met' if e.efficiency >= 0.4 else 'not met'}); forward+backward alone {100 * e.fwd_bwd_efficiency:.1f}%.\n",
              f"\nFigures: {', '.join(f'[{n}]({n})' for n in figures)}.\n"]
    if notes and Path(notes).exists():  # the hand-written reading of the numbers
        lines += ["\n", Path(notes).read_text()]
    path = out / "summary.md"
    path.write_text("\n".join(x.strip("\n") + "\n" for x in lines))
    return path
