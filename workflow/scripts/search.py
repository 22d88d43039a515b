"""Rule search: one system searched at every budget of its sweep; writes the run and the QPS."""

from ehi.core.unfinished import hold  # the standard library alone, so the marker is on disk at once

attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)


def main():
    import json
    from pathlib import Path

    from ehi.core.rule_script import setup  # first of the package: it pins the CPU kernels before torch loads

    from ehi.core.io import write_table
    from ehi.data.dataset import Dataset
    from ehi.evaluate.sweep import search_system
    from ehi.model.embed import load_array
    from ehi.search.config import SearchConfig
    from ehi.search.grids import with_leaf_count_grid

    setup(snakemake)
    inp, p, w = snakemake.input, snakemake.params, snakemake.wildcards
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
    write_table(run, "run", snakemake.output.run, meta={"index": run.attrs.get("index", {})})
    write_table(qps, "qps", snakemake.output.qps)


main()
attempt.unlink()
