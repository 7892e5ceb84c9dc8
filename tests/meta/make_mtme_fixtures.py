"""Write tests/meta/fixtures/mtme_ted.json: mt-metrics-eval's own numbers on the TED MQM data, for
tests/meta/test_mtme_equality.py.

Run from the repository root, with a checkout of google-research/mt-metrics-eval (never the PyPI package of
that name, which is unrelated) on the path given, and the shared data::

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python tests/meta/make_mtme_fixtures.py /path/to/mt-metrics-eval

It reads the judgment files and scores the outputs with sacrebleu directly (sentence BLEU, chrF and TER, as the
lab's sentBLEU, chrF and TER are configured; corpus scores at system level), independently of muttlab.meta,
then runs mt-metrics-eval's ``stats.KendallWithTiesOpt`` (variant acc23, sample_rate 1.0; item-grouped on every
output, ungrouped on the first items of each pair, about 1,000 outputs, which its all-pairs code can hold) and
``stats.Agreement`` (system level), and stores only the numbers. The data and the toolkit are not copied.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF, TER

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "fixtures" / "mtme_ted.json"
PAIRS = {"en-de": ("ende", "ref-A"), "zh-en": ("zhen", "ref-B")}
ALIASES = {"ref": "ref-A", "refB": "ref-B"}
# The first items of each pair, about 1,000 outputs: 77 x 13 (en-de), 71 x 14 (zh-en).
SLICE_OUTPUTS = 1000


def read_pair(folder: Path, stem: str, reference: str):
    """(systems, segments, gold, outputs, references) as the data README defines them."""
    score_rows = [line.split() for line in (folder / f"{stem}.avg_seg_scores.tsv").read_text("utf-8").splitlines()[1:]
                  if line.strip()]
    systems = list(dict.fromkeys(r[0] for r in score_rows if r[0] != reference))
    scores = {(r[0], int(r[2])): float(r[1]) for r in score_rows if r[1] != "None"}
    segments = sorted({seg for (_, seg) in scores})
    texts = {}
    with (folder / f"{stem}.tsv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            system = ALIASES.get(row["system"], row["system"])
            texts[(system, int(row["seg_id"]))] = row["target"].replace("<v>", "").replace("</v>", "")
    gold = np.array([[scores[(s, g)] for g in segments] for s in systems])
    outputs = [[texts[(s, g)] for g in segments] for s in systems]
    refs = [texts[(reference, g)] for g in segments]
    return systems, segments, gold, outputs, refs


def main(argv: list[str]) -> int:
    mtme = Path(argv[0]).resolve()
    sys.path.insert(0, str(mtme))
    from mt_metrics_eval import stats

    data = Path(os.environ["MUTTLAB_DATA_DIR"])
    sentence = {"sentBLEU": BLEU(effective_order=True), "chrF": CHRF(), "TER": TER()}
    corpus = {"sentBLEU": BLEU(), "chrF": CHRF(), "TER": TER()}
    out = {"command": "MUTTLAB_DATA_DIR=../shared/data .venv/bin/python tests/meta/make_mtme_fixtures.py "
                      "/path/to/mt-metrics-eval",
           "mt_metrics_eval_commit": subprocess.run(["git", "-C", str(mtme), "rev-parse", "HEAD"],
                                                    capture_output=True, text=True).stdout.strip() or "unknown",
           "sacrebleu": sacrebleu.__version__, "pairs": {}}
    for pair, (code, reference) in PAIRS.items():
        folder = data / "mqm" / "ted" / code
        stem = f"mqm_ted_{code}"
        systems, segments, gold, outputs, refs = read_pair(folder, stem, reference)
        digest = hashlib.sha256((folder / f"{stem}.tsv").read_bytes())
        digest.update((folder / f"{stem}.avg_seg_scores.tsv").read_bytes())
        n_sys = len(systems)
        items = SLICE_OUTPUTS // n_sys
        record = {"data_digest": digest.hexdigest(), "systems": systems, "slice_items": items, "metrics": {}}
        gold_sys = [float(np.mean(row)) for row in gold]
        for name, metric in sentence.items():
            sign = -1.0 if name == "TER" else 1.0
            seg = np.array([[sign * metric.sentence_score(h, [r]).score for h, r in zip(row, refs)] for row in outputs])
            sys_scores = [sign * corpus[name].corpus_score(row, [refs]).score for row in outputs]
            grouped = stats.KendallWithTiesOpt(list(gold.ravel()), list(seg.ravel()), "acc23", num_sys=n_sys,
                                               average_by="item", sample_rate=1.0)
            small_gold, small_seg = gold[:, :items], seg[:, :items]
            ungrouped = stats.KendallWithTiesOpt(list(small_gold.ravel()), list(small_seg.ravel()), "acc23",
                                                 num_sys=n_sys, average_by="none", sample_rate=1.0)
            agree, n_pairs = stats.Agreement(gold_sys, sys_scores)
            seg_agree, seg_pairs = stats.Agreement(list(small_gold.ravel()), list(small_seg.ravel()))
            record["metrics"][name] = {
                "acc_eq_item": float(grouped[0]), "acc_eq_item_epsilon": float(grouped[1]),
                "acc_eq_slice": float(ungrouped[0]), "acc_eq_slice_epsilon": float(ungrouped[1]),
                "pairwise_acc_slice": float(seg_agree / seg_pairs),
                "pairwise_acc_sys": float(agree / n_pairs), "system_scores": [float(v) for v in sys_scores]}
            print(pair, name, record["metrics"][name]["acc_eq_item"], record["metrics"][name]["acc_eq_slice"],
                  file=sys.stderr)
        out["pairs"][pair] = record
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
