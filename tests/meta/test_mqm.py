"""The MQM reader on the real TED files: the published system-level table, the data README's quirks, and a
clear error (file, line, field) for each way a file can be wrong."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from muttlab.errors import DataError, MuttlabError
from muttlab.meta import mqm
from muttlab.resources.bundled import data_dir as package_data
from muttlab.settings import Limits, set_limits


def published_table(pair: str) -> list[tuple[str, float]]:
    """The README of google/wmt-mqm-human-evaluation's TED table, as shipped in data/published (its source
    column says so), in the README's order."""
    with (package_data() / "published" / "mqm_ted_system.csv").open(encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["subset"].startswith(f"{pair}:")]
    assert all("wmt-mqm-human-evaluation README" in r["source"] for r in rows)
    return [(r["subset"].partition(":")[2], float(r["value"])) for r in rows]


@pytest.mark.parametrize("pair", ["en-de", "zh-en"])
def test_the_published_system_table_is_reproduced_in_its_order(ted, pair):
    ours = mqm.system_table(ted[pair])
    published = published_table(pair)
    assert [system for system, _ in ours] == [system for system, _ in published]
    for (system, value), (_, expected) in zip(ours, published):
        assert value == pytest.approx(expected, abs=0.01), system


def test_shapes_and_references_follow_the_data_readme(ted):
    # Data README: en-de 14 rated outputs (13 systems + ref-A) x 529 segments; zh-en 15 (13 + ref-A + ref-B).
    ende, zhen = ted["en-de"], ted["zh-en"]
    assert ende.shape == (13, 529) and ende.n_outputs == 6877 and ende.reference_system == "ref-A"
    assert zhen.shape == (14, 529) and zhen.n_outputs == 7406 and zhen.reference_system == "ref-B"
    assert "ref-A" not in ende.systems and "ref-A" in zhen.systems and "ref-B" not in zhen.systems
    assert (ende.target_language, zhen.target_language) == ("de", "en")
    assert ende.items[:2] == ("1", "2") and zhen.items[0] == "84"  # zh-en's rated segments start at 84
    for judgments in (ende, zhen):
        assert all(len(r) == 1 and r[0] for r in judgments.references)
        texts = [h for row in judgments.hypotheses for h in row] + list(judgments.sources)
        assert not any("<v>" in t or "</v>" in t for t in texts)


def test_the_first_rows_of_the_error_file(ted):
    ende = ted["en-de"]
    s, i = ende.systems.index("Facebook-AI"), ende.items.index("1")
    # mqm_ted_ende.tsv line 2: Facebook-AI, segment 1, "<v>in Betracht zu ziehen</v>", Minor terminology error.
    assert ende.hypotheses[s][i].startswith("Ich möchte Sie alle bitten, für eine Sekunde die sehr einfache "
                                            "Tatsache in Betracht zu ziehen, dass")
    (span,) = ende.errors[(s, i)]
    assert ende.hypotheses[s][i][span.start:span.end] == "in Betracht zu ziehen"
    assert (span.category, span.severity, span.rater) == ("Terminology/Inappropriate for context", "Minor", "rater1")
    assert ende.gold[s, i] == -1.0  # avg_seg_scores.tsv line 2: Facebook-AI -1.000000 1


def test_an_open_mark_runs_to_the_end_and_gives_the_same_output(ted):
    # Data README: ende line 6444 (metricsystem1, segment 475) opens a <v> it never closes.
    ende = ted["en-de"]
    s, i = ende.systems.index("metricsystem1"), ende.items.index("475")
    text = ende.hypotheses[s][i]
    assert any(span.end == len(text) and not span.in_source for span in ende.errors[(s, i)])
    assert mqm.unmarked("a <v>b</v> c <v>d e") == ("a b c d e", [(2, 3), (6, 9)])


def test_errors_marked_in_the_source_are_kept_as_source_spans(ted):
    marked = [span for spans in ted["zh-en"].errors.values() for span in spans if span.in_source]
    assert marked and all(0 <= s.start <= s.end for s in marked)


@pytest.mark.parametrize("pair", ["en-de", "zh-en"])
def test_the_mqm_weights_give_the_segment_scores_exactly(data_dir, ted, pair):
    # Data README: the weights summed per rater, averaged and negated give avg_seg_scores.tsv for every pair.
    spec = mqm.TED_PAIRS[pair]
    errors, scores = (data_dir / f for f in spec.files)
    recomputed = mqm.mqm_from_errors(errors, scores)
    judgments = ted[pair]
    assert len(recomputed) == judgments.n_outputs + 529  # the reference translation's outputs too
    for (system, seg), value in recomputed.items():
        i = judgments.items.index(str(seg))
        expected = (judgments.reference_gold[i] if system == judgments.reference_system
                    else judgments.gold[judgments.systems.index(system), i])
        assert value == pytest.approx(expected, abs=1e-6)
    assert mqm.weight("Fluency/Punctuation", "Minor") == 0.1 and mqm.weight("Non-translation", "Major") == 25
    assert mqm.weight("Source error", "Major") == 5 and mqm.weight("Other", "Neutral") == 0


def test_a_ted_folder_knows_its_pair_and_reference(data_dir):
    judgments = mqm.read_mqm_folder(data_dir / "mqm" / "ted" / "zhen")
    assert judgments.pair == "zh-en" and judgments.reference_system == "ref-B"


def test_unknown_pairs_are_names_not_paths(meta_settings):
    for name in ("de-en", "../ted/ende", "en-de/../../x", ""):
        with pytest.raises(MuttlabError, match="unknown language pair .* choose from en-de, zh-en"):
            mqm.load_ted(meta_settings, name)


# --------------------------------------------------------------------------- errors in a small copy

SEGMENTS = {"1", "2", "3"}


@pytest.fixture
def small(data_dir, tmp_path):
    """en-de cut to segments 1-3 (every system), as a folder that is not a TED pair."""
    folder = tmp_path / "small"
    folder.mkdir()
    source = data_dir / "mqm" / "ted" / "ende"
    lines = (source / "mqm_ted_ende.tsv").read_text(encoding="utf-8").split("\n")
    kept = [lines[0]] + [line for line in lines[1:] if line and line.split("\t")[3] in SEGMENTS]
    (folder / "small.tsv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    scores = (source / "mqm_ted_ende.avg_seg_scores.tsv").read_text(encoding="utf-8").split("\n")
    kept_scores = [scores[0]] + [line for line in scores[1:] if line and line.split()[2] in SEGMENTS]
    (folder / "small.avg_seg_scores.tsv").write_text("\n".join(kept_scores) + "\n", encoding="utf-8")
    return folder


def read(folder: Path):
    return mqm.read_mqm_folder(folder, reference="ref-A", pair="en-de")


def rewrite(path: Path, line: int, change) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[line - 1] = change(lines[line - 1])
    path.write_text("\n".join(lines), encoding="utf-8")


def field(text: str, index: int, value: str) -> str:
    cells = text.split("\t")
    cells[index] = value
    return "\t".join(cells)


def test_the_small_copy_reads(small):
    judgments = read(small)
    assert judgments.shape == (13, 3) and judgments.name == "small"
    with pytest.raises(DataError, match="not one of the TED pairs.*--pair en-de --reference ref-A"):
        mqm.read_mqm_folder(small)


@pytest.mark.parametrize("case,change,message", [
    ("truncated row", lambda t: t[: t.index("\t", 40)], r"small.tsv, line 5: expected 10 tab-separated fields, found"),
    ("unknown system", lambda t: field(t, 0, "Bing"), r"small.tsv, line 5: field system: unknown system 'Bing'"),
    ("bad segment", lambda t: field(t, 3, "x1"), r"small.tsv, line 5: field seg_id: 'x1' is not a segment number"),
    ("bad severity", lambda t: field(t, 8, "Critical"), r"small.tsv, line 5: field severity: 'Critical'"),
    ("empty rater", lambda t: field(t, 4, " "), r"small.tsv, line 5: field rater: empty"),
])
def test_a_bad_error_row_is_named(small, case, change, message):
    rewrite(small / "small.tsv", 5, change)
    with pytest.raises(DataError, match=message):
        read(small)


def test_a_row_whose_output_disagrees_with_another_row_is_named(small):
    path = small / "small.tsv"
    lines = path.read_text(encoding="utf-8").split("\n")
    key = lambda line: (line.split("\t")[0], line.split("\t")[3])  # noqa: E731
    first = next(n for n, line in enumerate(lines[1:], start=2) if line
                 and sum(key(other) == key(line) for other in lines[1:] if other) > 1)
    second = next(n for n, line in enumerate(lines[1:], start=2) if line and n > first and key(line) == key(lines[first - 1]))
    rewrite(path, second, lambda t: field(t, 6, t.split("\t")[6] + " extra"))
    with pytest.raises(DataError, match=rf"small.tsv, line {second}: field target: .* differs from line {first}'s"):
        read(small)


def test_a_source_that_disagrees_is_named(small):
    rewrite(small / "small.tsv", 6, lambda t: field(t, 5, "Another source."))
    with pytest.raises(DataError, match=r"line 6: field source: segment \d+'s source differs from line \d+'s"):
        read(small)


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "1e999", "-", "-1e300"])
def test_a_bad_score_is_named(small, value):
    rewrite(small / "small.avg_seg_scores.tsv", 3, lambda t: f"{t.split()[0]}\t{value} {t.split()[2]}")
    with pytest.raises(DataError, match=rf"small.avg_seg_scores.tsv, line 3: field mqm_avg_score: '{value}' is not a "
                                        r"finite number within ±1e\+15, nor None"):
        read(small)


def test_a_truncated_score_file_is_named(small):
    path = small / "small.avg_seg_scores.tsv"
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n")[:-3], encoding="utf-8")
    with pytest.raises(DataError, match=r"small.avg_seg_scores.tsv, line \d+: expected 3 fields"):
        read(small)


def test_a_rated_output_without_error_rows_is_named(small):
    # The error file cut at a line boundary: the last (system, segment) rows are gone.
    path = small / "small.tsv"
    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    last = lines[-1].split("\t")
    path.write_text("\n".join(l for l in lines if l.split("\t")[:4:3] != last[:4:3]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"small.avg_seg_scores.tsv, line \d+: .* is rated but has no row in "
                                        r"small.tsv \(is the error file cut short\?\)"):
        read(small)


def test_error_rows_of_an_unrated_output_are_named(small):
    path = small / "small.avg_seg_scores.tsv"
    rewrite(path, 2, lambda t: f"{t.split()[0]}\tNone {t.split()[2]}")
    with pytest.raises(DataError, match=r"small.tsv, line \d+: field seg_id: .* has error rows but score None "
                                        r"\(line 2\) in small.avg_seg_scores.tsv"):
        read(small)


def test_a_missing_reference_and_a_wrong_header_are_named(small):
    with pytest.raises(DataError, match="names no system 'ref-C' to use as the reference"):
        mqm.read_mqm_folder(small, reference="ref-C", pair="en-de")
    rewrite(small / "small.tsv", 1, lambda t: t.replace("seg_id", "segment"))
    with pytest.raises(DataError, match=r"small.tsv, line 1: the header must be the tab-separated columns"):
        read(small)


def test_not_utf8_and_over_the_limits_are_named(small):
    path = small / "small.tsv"
    data = path.read_bytes()
    path.write_bytes(data[:200] + "ü".encode("latin-1") + data[200:])
    with pytest.raises(DataError, match=r"small.tsv, line \d+: not valid UTF-8"):
        read(small)
    path.write_bytes(data)
    try:
        set_limits(Limits(max_pairs=10))
        with pytest.raises(DataError, match=r"small.tsv: the file has [\d,]+ pairs, over the limit of 10"):
            read(small)
        set_limits(Limits(max_chars=50))
        with pytest.raises(DataError, match=r"small.tsv, line 2: field source has \d+ characters, over the limit"):
            read(small)
    finally:
        set_limits(None)


def test_nothing_is_dropped_from_a_real_file(ted):
    # Every rated (system, segment) of the score file is an output (data README counts).
    assert int(np.isnan(ted["en-de"].gold).sum()) == 0 and int(np.isnan(ted["zh-en"].gold).sum()) == 0
