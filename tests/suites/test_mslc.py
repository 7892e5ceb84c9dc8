"""MSLC24-B (Knowles, Larkin and Lo, WMT 2024): every line of en-de and en-es, empty hypotheses and empty
references included, scored through ``muttlab.api.score`` equals the segment scores the WMT24 metrics task
published for sacreBLEU's BLEU and chrF (``metric-scores/{BLEU,chrF}-ref.seg.score``)."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab import api


def _lines(path) -> list[str]:
    # One segment per line; an empty segment is an empty line (str.splitlines would also split on U+2028).
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


@pytest.mark.parametrize("pair", ["en-de", "en-es"])
def test_segment_scores_equal_wmt24(pair, data_dir, data_settings):
    folder = data_dir / "mslc" / "2024" / "data" / "MSLC-B" / pair
    hypotheses, references = _lines(folder / "hypothesis.txt"), _lines(folder / "reference.txt")
    types = [line.split("\t")[1] for line in _lines(folder / "types.tsv")]
    assert len(hypotheses) == len(references) == len(types)
    assert sum(not h for h in hypotheses) == types.count("empty-hypothesis") == 40
    assert sum(not r for r in references) == types.count("empty-source-and-reference") == 40
    scores = api.score(data_settings, ["sentBLEU", "chrF"], hypotheses, [[r] for r in references])
    assert (scores["problem"] == "").all()
    for metric, published in (("sentBLEU", "BLEU-ref"), ("chrF", "chrF-ref")):
        wmt = np.array([float(v) for v in _lines(folder / "metric-scores" / f"{published}.seg.score")])
        ours = scores[scores["metric"] == metric].sort_values("candidate")["score"].to_numpy()
        assert len(ours) == len(wmt)
        np.testing.assert_allclose(ours, wmt, rtol=0, atol=1e-9)
