"""train.pairs_per_epoch: each epoch walks a fresh seeded subset of the pairs."""

import numpy as np

from ehi.model.encoder import load_encoder
from ehi.train.batches import TrainData
from ehi.train.config import TrainConfig
from ehi.train.loop import epoch_size, train


def test_an_epoch_walks_that_many_pairs_and_zero_means_all(tiny_dataset, tmp_path):
    n = len(TrainData.from_dataset(tiny_dataset, "train").pair_q)
    assert epoch_size(TrainConfig(), n) == n and epoch_size(TrainConfig(pairs_per_epoch=5), n) == 5
    assert epoch_size(TrainConfig(pairs_per_epoch=10 * n), n) == n
    cfg = TrainConfig(epochs=2, batch_size=8, height=1, branching=4, max_length=16, device="cpu",
                      encode_batch_size=32, pairs_per_epoch=20, diagnostics=False)
    summary = train(tiny_dataset, load_encoder("tiny-random", max_length=16, device="cpu", seed=0), cfg,
                    tmp_path, progress=False)
    assert summary["steps"] == 2 * int(np.ceil(20 / 8))
