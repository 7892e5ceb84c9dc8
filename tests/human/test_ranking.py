"""The ranking-judgment converter (ReVal §5, Algorithm 1) on a small file built here.

Expected numbers are worked out by hand in the comments: max rank R = 3, scores on 1..5, so
score = 5 - (mean rank - 1) * 2.
"""
from __future__ import annotations

import pandas as pd
import pytest

from muttlab.human import ranking
from muttlab.cli import main
from muttlab.errors import DataError, MuttlabError

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
    assert '"threshold","kept","tau"' in capsys.readouterr().out  # text cells are quoted (docs/security.md)
    assert main(["ranking", "convert", str(tmp_path / "nope.tsv")]) == 2


# --------------------------------------------------------------------------- WMT's wide CSV format

def _wmt_files(tmp_path, extra_pair: bool = True):
    """The screens above as a WMT 2013-style CSV (5 system slots), with a reference file and output folder.

    Each screen also shows the reference as a system ("_ref", no output file) and one slot left blank (-1);
    a German-English screen stands for the other pairs a WMT file holds.
    """
    index = {"s1": 1, "s2": 2}
    systems = tmp_path / "outputs"
    systems.mkdir()
    for system in "ABXCD":
        lines = [CANDS.get((seg, system), f"{system} output for another segment") for seg in ("s1", "s2")]
        (systems / system).write_text("\n".join(lines) + "\n", encoding="utf-8")
    references = tmp_path / "ref.en"
    references.write_text(f"{REF1}\n{REF2}\n", encoding="utf-8")
    header = ["srclang", "trglang", "srcIndex", "documentId", "segmentId", "judgeId"]
    header += [f"system{k}{f}" for k in range(1, 6) for f in ("Number", "Id")]
    header += [f"system{k}rank" for k in range(1, 6)]
    rows = []
    for judgment, segment, ranks in SCREENS:
        shown = list(ranks.items()) + [("_ref", 1), ("A" if segment == "s2" else "C", -1)]
        shown += [("", -1)] * (5 - len(shown))
        row = ["Czech", "English", str(index[segment]), "-1", str(index[segment]), f"judge-{judgment}"]
        row += [x for system, _ in shown for x in ("-1", system)]
        row += [str(rank) for _, rank in shown]
        rows.append(row)
    if extra_pair:
        rows.append(["German", "English", "1", "-1", "1", "judge-9", *["-1", "A", "-1", "B"], *["-1", ""] * 3,
                     "2", "1", "-1", "-1", "-1"])
    path = tmp_path / "wmt13-judgments.csv"
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")
    return path, references, systems


def test_wmt_csv_gives_the_same_conversion_as_the_long_table(tmp_path, ranking_file):
    path, references, systems = _wmt_files(tmp_path)
    assert ranking.is_wmt_format(path) and not ranking.is_wmt_format(ranking_file)
    wmt = ranking.read_wmt_rankings(path, references, systems, pair="cs-en")
    assert wmt.pair == "Czech-English"
    assert wmt.blank == 5 and wmt.missing_outputs == {"_ref": 5} and wmt.empty_texts == 0
    assert len(wmt.frame) == sum(len(r) for _, _, r in SCREENS) and wmt.frame["judgment"].nunique() == 5
    ours = ranking.convert(wmt.frame)
    theirs = ranking.convert(ranking.read_rankings(ranking_file))
    assert (ours.threshold, ours.tau, ours.ranked) == (theirs.threshold, theirs.tau, theirs.ranked)
    columns = ["reference", "candidate", "score", "n", "variance"]
    assert ours.pairs[columns].sort_values("candidate").values.tolist() == \
        theirs.pairs[columns].sort_values("candidate").values.tolist()


def test_wmt_csv_errors_say_what_to_give(tmp_path):
    path, references, systems = _wmt_files(tmp_path)
    with pytest.raises(DataError, match=r"2 language pairs \(Czech-English, German-English\).*--pair"):
        ranking.read_wmt_rankings(path, references, systems)
    with pytest.raises(DataError, match="no judgments for 'fr-en'"):
        ranking.read_wmt_rankings(path, references, systems, pair="fr-en")
    short = tmp_path / "short.en"
    short.write_text(f"{REF1}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 6: srcIndex 2 is past the 1 lines"):
        ranking.read_wmt_rankings(path, short, systems, pair="Czech-English")
    misnamed = tmp_path / "misnamed-outputs"
    misnamed.mkdir()
    (misnamed / "A.cs-en").write_text("x\ny\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"no file in .* is named as a ranked system .*holds A\.cs-en"):
        ranking.read_wmt_rankings(path, references, misnamed, pair="cs-en")
    # later WMT files write ISO 639-2 codes; --pair may use either kind of code or the names
    coded = tmp_path / "coded.csv"
    coded.write_text(path.read_text(encoding="utf-8").replace("Czech,English", "ces,eng"), encoding="utf-8")
    assert ranking.read_wmt_rankings(coded, references, systems, pair="cs-en").pair == "ces-eng"
    assert ranking.read_wmt_rankings(coded, references, systems, pair="Czech-English").pair == "ces-eng"


def test_cli_converts_a_wmt_csv(tmp_path, capsys):
    path, references, systems = _wmt_files(tmp_path, extra_pair=False)
    out = tmp_path / "pairs.tsv"
    assert main(["ranking", "convert", str(path), "--pairs", str(out)]) == 2
    assert "--references REF_FILE and --systems" in capsys.readouterr().err
    assert main(["ranking", "convert", str(path), "--references", str(references), "--systems", str(systems),
                 "--pairs", str(out)]) == 0
    err = capsys.readouterr().err
    assert "WMT Czech-English: 14 ranks on 5 screens; dropped 5 blank ranks; 5 ranks of 1 systems" in err
    assert sorted(pd.read_csv(out, sep="\t")["candidate"]) == sorted([CANDS[("s1", "A")], CANDS[("s1", "B")]])
