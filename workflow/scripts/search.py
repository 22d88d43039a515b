"""Rule search: one system searched at every budget of its sweep; writes the run and the QPS."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.data.dataset import Dataset  # noqa: E402
from ehi.model.embed import load_array  # noqa: E402
from ehi.evaluate.sweep import search_system  # noqa: E402
from ehi.search.config import SearchConfig  # noqa: E402
from ehi.search.registry import with_leaf_count_grid  # noqa: E402
from ehi.core.io import write_table  # noqa: E402

log = setup(snakemake)  # noqa: F821
inp, p, w = snakemake.input, snakemake.params, snakemake.wildcards  # noqa: F821
run, qps = search_system(
    system=w.system,
    variant=w.variant,
    dataset=Dataset.read(p.data_dir),
    corpus_emb=load_array(inp.corpus),
    query_emb=load_array(inp.queries),
    split=p.split,
    settings=SearchConfig.from_dict(with_leaf_count_grid(dict(p.search), json.loads(Path(inp.leaf_count).read_text())
                                                         if "leaf_count" in inp.keys() else {})),
    index_dir=inp.get("index"),
)
write_table(run, "run", snakemake.output.run)  # noqa: F821
write_table(qps, "qps", snakemake.output.qps)  # noqa: F821
