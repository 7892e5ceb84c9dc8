"""The ranking-judgment converter (ReVal §5, Algorithm 1) on a small file built here.

Expected numbers are worked out by hand in the comments: max rank R = 3, scores on 1..5, so
score = 5 - (mean rank - 1) * 2.
"""
from __future__ import annotations

import pandas as pd
import pytest

from engine import ranking
from engine.cli import main
from engine.errors import DataError, MuttlabError

REF1 = "a dog runs on the beach"
REF2 = "two children play football"
CANDS = {("s1", "A"): "a dog runs along the beach", ("s1", "B"): "dog beach", ("s1", "X"): "the a dog dog runs",
         ("s2", "C"): "two kids play soccer", ("s2", "D"): "children football"}
# Segment s1: A ranks 1,2,1,2 (mean 1.5, var 0.25, score 4); B ranks 2,3,2,3 (mean 2.5, var 0.25, score 2);
# X ranks 3,1,3,1 (mean 2, var 1, score 3). Segment s2: C and D shown once (n = 1).
SCREENS = [
    ("j1", "s1", {"A": 1, "B": 2, "X": 3}),
    ("j2", "s1", {"X": 1, "A": 2, "B": 3}),
    ("j3", "s1", {"A": 1, "B": 2, "X": 3}),
    ("j4", "s1", {"X": 1, "A": 2, "B": 3}),
    ("j5", "s2", {"C": 1, "D": 2}),
]


def _rows():
    for judgment, segment, ranks in SCREENS:
        for system, rank in ranks.items():
            yield {"judgment": judgment, "segment": segment, "system": system, "rank": rank,
                   "reference": REF1 if segment == "s1" else REF2, "candidate": CANDS[(segment, system)]}


@pytest.fixture
def ranking_file(tmp_path):
    path = tmp_path / "ranks.tsv"
    pd.DataFrame(list(_rows())).to_csv(path, sep="\t", index=False)
    return path


def test_reads_and_aggregates(ranking_file):
    table = ranking.aggregate(ranking.read_rankings(ranking_file)).set_index(["segment", "system"])
    assert table.loc[("s1", "A"), "n"] == 4
    assert table.loc[("s1", "A"), "mean_rank"] == pytest.approx(1.5)
    assert table.loc[("s1", "A"), "variance"] == pytest.approx(0.25)
    assert table.loc[("s1", "X"), "variance"] == pytest.approx(1.0)
    assert table.loc[("s1", "A"), "score"] == pytest.approx(4.0)
    assert table.loc[("s1", "B"), "score"] == pytest.approx(2.0)
    assert table.loc[("s1", "X"), "score"] == pytest.approx(3.0)
    assert table.loc[("s2", "C"), "score"] == pytest.approx(5.0)


def test_variance_filter_keeps_consistent_pairs(ranking_file):
    result = ranking.convert(ranking.read_rankings(ranking_file), min_judgments=2, tau=0.78)
    # s2's systems were ranked once: dropped. At variance <= 0.25 only A and B remain, and every
    # screen orders them as their scores do: tau = 4/4. Adding X (variance 1) gives, per screen,
    # 2 concordant and 1 discordant pairs: tau = (8 - 4) / 12 = 1/3 < 0.78, so 0.25 is chosen.
    assert result.ranked == 3
    assert result.threshold == pytest.approx(0.25)
    assert result.tau == pytest.approx(1.0)
    assert sorted(result.pairs["system"]) == ["A", "B"]
    assert result.curve["tau"].tolist() == pytest.approx([1.0, 1 / 3])
    assert result.curve["kept"].tolist() == [2, 3]


def test_lower_target_keeps_noisy_pair_and_min_judgments_one_keeps_singletons(ranking_file):
    frame = ranking.read_rankings(ranking_file)
    loose = ranking.convert(frame, min_judgments=2, tau=0.3)
    assert loose.threshold == pytest.approx(1.0) and loose.tau == pytest.approx(1 / 3)
    singles = ranking.convert(frame, min_judgments=1, tau=0.3)
    # C and D (variance 0) join; j5 adds one concordant pair: tau = (9 - 4) / 13.
    assert singles.curve["threshold"].tolist() == pytest.approx([0.0, 0.25, 1.0])
    assert singles.tau == pytest.approx(5 / 13)
    assert set(singles.pairs["system"]) == {"A", "B", "X", "C", "D"}


def test_equal_scores_count_as_discordant():
    frame = pd.DataFrame([{"judgment": "j", "segment": "s", "system": s, "rank": r}
                          for s, r in (("P", 1), ("Q", 2))])
    assert ranking.kendall_tau(frame, {("s", "P"): 3.0, ("s", "Q"): 3.0}) == -1.0
    assert ranking.kendall_tau(frame, {("s", "P"): 4.0, ("s", "Q"): 3.0}) == 1.0


def test_unreachable_tau_is_a_clear_error(ranking_file):
    # tau never exceeds 1, so no threshold can reach 1.01.
    with pytest.raises(MuttlabError, match="even keeping only the most consistent"):
        ranking.convert(ranking.read_rankings(ranking_file), tau=1.01)


def test_bad_input_names_the_problem(tmp_path):
    missing = tmp_path / "missing.csv"
    missing.write_text("judgment,segment,system,rank\nj,s,A,1\n", encoding="utf-8")
    with pytest.raises(DataError, match="missing column"):
        ranking.read_rankings(missing)
    bad_rank = tmp_path / "bad.csv"
    bad_rank.write_text("judgment,segment,system,rank,reference,candidate\nj,s,A,1,r,c\nj,s,B,best,r,d\n",
                        encoding="utf-8")
    with pytest.raises(DataError, match=r"line 3.*whole number"):
        ranking.read_rankings(bad_rank)
    conflicting = tmp_path / "conflict.csv"
    conflicting.write_text("judgment,segment,system,rank,reference,candidate\nj1,s,A,1,r,c\nj2,s,A,2,r,other\n",
                           encoding="utf-8")
    with pytest.raises(DataError, match="candidate differs"):
        ranking.read_rankings(conflicting)
    with pytest.raises(MuttlabError, match="ranked 5 or more"):
        ranking.convert(ranking.validate(pd.DataFrame(list(_rows()))), min_judgments=5)


def test_cli_convert_writes_pairs(ranking_file, tmp_path, capsys):
    out = tmp_path / "pairs.tsv"
    assert main(["ranking", "convert", str(ranking_file), "--pairs", str(out), "--format", "csv"]) == 0
    pairs = pd.read_csv(out, sep="\t")
    assert sorted(pairs["candidate"]) == sorted([CANDS[("s1", "A")], CANDS[("s1", "B")]])
    assert set(pairs["reference"]) == {REF1}
    assert "threshold,kept,tau" in capsys.readouterr().out
    assert main(["ranking", "convert", str(tmp_path / "nope.tsv")]) == 2
