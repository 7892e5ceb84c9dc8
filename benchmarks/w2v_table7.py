"""W2V-AVG on the released MUTT sets against Boag et al. (2016), Table 7: accuracy per cell and the gap.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/w2v_table7.py [VECTORS ...] [--combine mean,max]

VECTORS: ``glove-6b-50d`` (default), ``word2vec-corpus`` (after ``muttlab vectors train``) or a path to a gensim
KeyedVectors file. Prints, per vectors x combination, the 27 cells of Table 7's nine corruption rows (ours,
paper) and how many are more than 2 points off.
"""
from __future__ import annotations

import argparse
import warnings

import pandas as pd

from muttlab.corruptions import catalog
from muttlab.corruptions.base import Rule
from muttlab.engine import verdict
from muttlab.engine.runner import model_dir
from muttlab.sources import data_file, load_mutt_experiments
from muttlab.metrics.w2v import W2VAvg
from muttlab.settings import load_settings

REF_COUNTS = (5, 10, 20)


def cells(metric: W2VAvg, suite, settings) -> pd.DataFrame:
    rows = []
    for name in suite.corruptions():
        trials = suite.of(name)
        rule = catalog.get(name).rule
        for k in REF_COUNTS:
            refs = [list(t.refs(k)) for t in trials]
            s_orig = metric.score([t.original for t in trials], refs)
            s_corr = metric.score([t.corrupted for t in trials], refs)
            ok = verdict.judge(s_orig, s_corr, verdict.EXPECTATION_OF_RULE[rule], metric.higher_is_better,
                               verdict.rules_for(settings, metric.name, metric.signature(), metric.noise_floor)).passed
            rows.append({"corruption": name, "refs": k, "ours": 100 * ok.mean(), "mean_s_orig": s_orig.mean(),
                         "rule": "strict" if rule is Rule.ORIG_BETTER else "difference"})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vectors", nargs="*", default=["glove-6b-50d"])
    parser.add_argument("--combine", default="mean,max")
    args = parser.parse_args()
    settings = load_settings(use_cache=False, workers=1)
    suite = load_mutt_experiments(settings)
    published = pd.read_csv(data_file(settings, "published/published.csv"))
    published = published[published["metric"] == "W2V-AVG"].rename(
        columns={"subset": "corruption", "value": "paper"})[["corruption", "refs", "rule", "paper"]]
    warnings.simplefilter("ignore", RuntimeWarning)  # OOV notes, counted in metric.last_oov
    for vectors in args.vectors:
        for combine in args.combine.split(","):
            metric = W2VAvg(vectors=vectors, combine=combine, model_dir=model_dir(settings))
            table = cells(metric, suite, settings).merge(published, on=["corruption", "refs", "rule"])
            gap = table["ours"] - table["paper"]
            print(f"{metric.signature()}: {int((gap.abs() > 2).sum())} of {len(table)} cells more than 2 points "
                  f"off, mean |gap| {gap.abs().mean():.1f}, mean s_orig {table['mean_s_orig'].mean():.3f}")
            print(table.pivot_table(index="corruption", columns="refs", values=["ours", "paper"]).round(1)
                  .to_string(), "\n")


if __name__ == "__main__":
    main()
