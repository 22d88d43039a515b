"""Cost of a training step and of a corpus re-embedding with the bottom k layers frozen and cached.

``train.freeze_layers: k`` computes the embeddings and the bottom k transformer layers once per text
(:mod:`ehi.model.layer_cache`), so a step and a re-embedding run only the top layers. This measures,
for k = 0, 2, 4 of all-MiniLM-L6-v2's 6 layers and two sequence lengths: the median seconds of an
EHI training step (forward, backward, AdamW) on a synthetic corpus, the seconds to re-embed the
corpus, the one-off cost of the layer cache, and the peak RSS of the process. Each setting runs in
a fresh process (peak RSS cannot be reset inside one), one torch thread, one after another:

    python -m benchmarks.frozen --out results/benchmarks/frozen_layers
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import pandas as pd

CHILD = """
import json, resource, sys, time, tempfile
import numpy as np, torch
torch.set_num_threads(1)
from pathlib import Path
from ehi.data.synthetic import SyntheticConfig, generate
from ehi.model.encoder import load_encoder
from ehi.model.tree import TreeIndexer
from ehi.train.batches import TrainData, refresh_cache
from ehi.train.config import TrainConfig
from ehi.train.loop import make_optimizer
from ehi.train.step import train_step
k, max_length, n_docs, steps = (int(a) for a in sys.argv[1:5])
data = TrainData.from_dataset(generate(SyntheticConfig(n_docs=n_docs, n_queries=200)), "train")
encoder = load_encoder("all-MiniLM-L6-v2", max_length=max_length, device="cpu")
cfg = TrainConfig(batch_size=16, height=1, branching=8, max_length=max_length, device="cpu", freeze_layers=k)
facts = {"freeze_layers": k, "max_length": max_length, "n_docs": n_docs}
with tempfile.TemporaryDirectory() as tmp:
    t = time.perf_counter()
    if k:
        data.cache_frozen_layers(encoder, k, Path(tmp), cfg.layer_cache_dtype, 64)
    facts["cache_seconds"] = time.perf_counter() - t
    tree = TreeIndexer(encoder.dim, 1, 8)
    t = time.perf_counter()
    cache = refresh_cache(data, encoder, tree, cfg)
    facts["reembed_seconds"] = time.perf_counter() - t
    opt, sched = make_optimizer(encoder, tree, cfg, steps)
    encoder.train()
    times = []
    for b in range(steps):
        t = time.perf_counter()
        batch = np.arange(b * 16, (b + 1) * 16) % len(data.pair_q)
        terms, _ = train_step(batch, data, cache, np.random.default_rng(b), encoder, tree, cfg, torch.device("cpu"))
        opt.zero_grad(set_to_none=True)
        terms["loss"].backward()
        opt.step()
        times.append(time.perf_counter() - t)
    facts["step_seconds"] = float(np.median(times[1:]))  # the first step warms the allocator up
facts["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(facts))
"""


def run(layers=(0, 2, 4), lengths=(64, 192), n_docs: int = 256, steps: int = 4) -> pd.DataFrame:
    rows = []
    for max_length in lengths:
        for k in layers:
            proc = subprocess.run([sys.executable, "-c", CHILD, str(k), str(max_length), str(n_docs), str(steps)],
                                  capture_output=True, text=True, check=True)
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    table = pd.DataFrame(rows)
    base = table[table.freeze_layers == 0].set_index("max_length")
    for col in ("step_seconds", "reembed_seconds", "peak_rss_mib"):
        table[f"{col}_vs_k0"] = table[col] / table.max_length.map(base[col])
    return table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="path without suffix (.parquet and .md are written)")
    parser.add_argument("--n-docs", type=int, default=256)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    table = run(n_docs=args.n_docs)
    table.to_parquet(f"{args.out}.parquet", index=False)
    caption = (f"Frozen bottom layers (train.freeze_layers), all-MiniLM-L6-v2, one torch thread, batch 16 "
               f"(+2 hard negatives each), {args.n_docs} synthetic documents; medians of 3 steps after a warm-up; "
               f"each setting in its own process, one after another ({time.perf_counter() - start:.0f} s in all).\n\n")
    with open(f"{args.out}.md", "w") as fh:
        fh.write(caption + table.to_markdown(index=False, floatfmt=".3f") + "\n")
    print(table.to_string())


if __name__ == "__main__":
    main()
