"""Measure the per-step costs behind docs/scale_out.md on the machine at hand (CPU is fine).

    HF_HUB_OFFLINE=1 python docs/scale_out_costs.py > costs.json

Nothing is downloaded: the paper's encoder shape (DistilBERT: 6 layers, 768-d, 3072 FFN, 66M
parameters) is built with random weights, which costs exactly what the trained model costs. Texts
are synthetic with MS MARCO's typical lengths (queries ~10 tokens, passages ~80 tokens, both under
max_length 128). Prints JSON: seconds per unit and achieved FLOP/s, which docs/scale_out.md scales
to MS MARCO and to GPUs under assumptions it states.
"""

import json
import os
import platform
import statistics
import time

import numpy as np
import torch

Q_TOKENS, D_TOKENS = 10, 80  # MS MARCO: queries ~6 words, passages ~56 words (WordPiece adds ~30 %)


def timed(fn, repeat: int = 3) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def distilbert_encoder():
    from transformers import AutoTokenizer, DistilBertConfig, DistilBertModel

    from ehi.model.encoder import Encoder, minilm_path

    tok = AutoTokenizer.from_pretrained(str(minilm_path()))
    torch.manual_seed(0)
    model = DistilBertModel(DistilBertConfig(vocab_size=tok.vocab_size, dim=768, n_layers=6, n_heads=12,
                                             hidden_dim=3072, max_position_embeddings=512))
    return Encoder(model, tok, max_length=128, name="distilbert-shape")


def texts(n: int, tokens: int, seed: int) -> list[str]:
    words = ["river", "engine", "protein", "market", "season", "bridge", "signal", "garden", "theory", "window"]
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, tokens - 2)) for _ in range(n)]  # + [CLS], [SEP]


def encoder_flops_per_token(enc, seq: int) -> float:
    """Forward FLOPs per token: 2 x non-embedding parameters + attention scores and mixing."""
    cfg = enc.model.config
    n_params = sum(p.numel() for n, p in enc.model.named_parameters() if "embeddings" not in n)
    return 2 * n_params + 4 * cfg.n_layers * seq * cfg.dim


def main() -> None:
    from ehi.train.losses.objective import ehi_loss

    threads = torch.get_num_threads()
    out = {"machine": {"cpu": platform.processor() or platform.machine(), "torch_threads": threads,
                       "os_cpus": os.cpu_count()}}
    enc = distilbert_encoder().train()
    n_pairs, k = 4, 2  # a small batch; cost per pair is what scales
    qs, ds = texts(n_pairs, Q_TOKENS, 0), texts(n_pairs * (1 + k), D_TOKENS, 1)
    opt = torch.optim.AdamW(enc.parameters(), lr=1e-5)

    def step():
        q, d = enc(qs), enc(ds)
        mask = torch.ones(len(qs), len(ds), dtype=torch.bool)
        mask[torch.arange(len(qs)), torch.arange(len(qs))] = False
        loss = ehi_loss(q, d, torch.arange(len(qs)), mask)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()

    t_step = timed(step)
    tokens = n_pairs * Q_TOKENS + n_pairs * (1 + k) * D_TOKENS
    flops = 3 * (n_pairs * Q_TOKENS * encoder_flops_per_token(enc, Q_TOKENS)
                 + n_pairs * (1 + k) * D_TOKENS * encoder_flops_per_token(enc, D_TOKENS))
    out["train_step"] = {"pairs": n_pairs, "hard_negatives": k, "tokens": tokens, "seconds": t_step,
                         "seconds_per_pair": t_step / n_pairs, "flops": flops, "achieved_flops": flops / t_step}

    docs = texts(64, D_TOKENS, 2)
    t_enc = timed(lambda: enc.encode(docs, 32), repeat=2)
    f_enc = 64 * D_TOKENS * encoder_flops_per_token(enc, D_TOKENS)
    out["encode_passages"] = {"passages": 64, "seconds": t_enc, "passages_per_second": 64 / t_enc,
                              "flops": f_enc, "achieved_flops": f_enc / t_enc}

    # host-side work of one EHI step at MS MARCO size: mining hard negatives from the leaf cache
    from ehi.train.batches import TrainData
    from ehi.train.config import TrainConfig
    from ehi.train.negatives import mine_negatives

    n_docs, n_leaves, batch = 8_841_823, 7000, 256
    rng = np.random.default_rng(0)
    leaf = rng.integers(0, n_leaves, n_docs)
    data = TrainData(doc_texts=[""] * 0, query_ids=[str(i) for i in range(batch)], query_texts=[""] * batch,
                     pair_q=np.arange(batch), pair_d=rng.integers(0, n_docs, batch),
                     relevant=[np.array([d]) for d in rng.integers(0, n_docs, batch)])
    data.doc_texts = range(n_docs)  # only its length is read
    cfg = TrainConfig(height=1, branching=n_leaves, n_hard_negatives=2)
    cache = {"doc_leaf": leaf}
    t_mine = timed(lambda: mine_negatives(data, cache, data.pair_q, data.pair_d, 2, rng, cfg), repeat=3)
    out["mine_ehi_msmarco"] = {"docs": n_docs, "leaves": n_leaves, "batch": batch, "seconds": t_mine}

    # dense matrix products (what FAISS k-means/IVF assignment and DE's exact mining are made of)
    a = np.random.default_rng(1).standard_normal((4096, 768), dtype=np.float32)
    b = np.random.default_rng(2).standard_normal((768, 8192), dtype=np.float32)
    t_mm = timed(lambda: a @ b)
    out["gemm"] = {"achieved_flops": 2 * 4096 * 768 * 8192 / t_mm}

    # FAISS IVF: k-means training and add, per unit of work
    import faiss

    faiss.omp_set_num_threads(threads)
    x = np.random.default_rng(3).standard_normal((50_000, 768), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    nlist = 256
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(768), 768, nlist, faiss.METRIC_INNER_PRODUCT)
    start = time.perf_counter()
    index.train(x)
    t_train = time.perf_counter() - start
    start = time.perf_counter()
    index.add(x)
    t_add = time.perf_counter() - start
    out["faiss_ivf"] = {"n": len(x), "nlist": nlist, "niter": index.cp.niter, "train_seconds": t_train,
                        "train_seconds_per_point_centroid_iter": t_train / (len(x) * nlist * index.cp.niter),
                        "add_seconds": t_add, "add_seconds_per_point_centroid": t_add / (len(x) * nlist)}
    hnsw = faiss.IndexHNSWFlat(768, 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 200
    start = time.perf_counter()
    hnsw.add(x[:20_000])
    out["faiss_hnsw"] = {"n": 20_000, "M": 32, "ef_construction": 200,
                         "add_seconds": time.perf_counter() - start}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
