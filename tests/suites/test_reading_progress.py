"""A reader tells how far it has read a large file, so a page shows lines read of lines instead of a spinner
(a 100,000-row upload takes 1-2 s to read): on the real DEMETR files and a challenge-set TSV at the upload caps."""
from __future__ import annotations

import pytest

from muttlab import api
from muttlab.suites.readers import REPORT_EVERY
from tests.dashboard.conftest import app_env  # noqa: F401 (fixture)

HEADER = "lp\tsource\tgood\tincorrect\treference\tphenomena\n"


def _wmt(rows: int) -> bytes:
    return (HEADER + "".join(f"en-de\tQuelle {i}\tgood {i}\tbad {i}\tref {i}\tphenomenon-{i % 7}\n"
                             for i in range(rows))).encode()


def _read_counting(data, **kwargs):
    seen: list[tuple[int, int]] = []
    result = api.read_suite(data, progress=lambda done, total: seen.append((done, total)), **kwargs)
    return result, seen


@pytest.mark.parametrize("rows", [100_000, 3])
def test_a_tsv_reports_its_lines_every_few_thousand_and_at_its_end(rows):
    data = _wmt(rows)
    result, seen = _read_counting(data, name="big.tsv")
    assert seen[-1] == (rows, rows)  # the lines after the header
    assert all(total == rows for _, total in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert len(seen) == -(-rows // REPORT_EVERY)  # one every REPORT_EVERY lines, and the end
    plain = api.read_suite(data, name="big.tsv")
    assert [t.id for t in result.suite.trials] == [t.id for t in plain.suite.trials]  # reading is unchanged


def test_a_demetr_file_reports_its_records(data_dir):
    path = data_dir / "demetr" / "dataset" / "base_id35_reference.json"
    result, seen = _read_counting(path)
    records = len(result.suite.trials) + sum(result.not_applied.values()) + len(result.problems)
    assert seen[-1] == (records, records)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_a_report_ends_with_its_block():
    from muttlab.suites.readers import rows_reported_to

    told = []
    with rows_reported_to(lambda *a: told.append(a)):
        pass
    api.read_suite(_wmt(10), name="small.tsv")
    assert told == []


def test_the_challenge_pages_reading_is_told_to_its_bar_in_lines(app_env):  # noqa: F811
    """The Challenge sets and Drill-down pages read an upload through ``services.read_challenge`` with their bar's
    callback: it is told lines read of lines, in the words the bar draws as they are."""
    from muttlab.dashboard import services
    from muttlab.dashboard.ui import COUNTED

    told = []
    services.read_challenge(services.settings(), _wmt(12_000), "upload.tsv", None,
                            lambda step, total, message: told.append((step, total, message)))
    assert [m for _, _, m in told] == ["reading upload.tsv: 5,000 of 12,000 lines",
                                       "reading upload.tsv: 10,000 of 12,000 lines",
                                       "reading upload.tsv: 12,000 of 12,000 lines"]
    assert all(COUNTED.search(m) for _, _, m in told)


def test_your_sentences_are_counted_as_they_are_parsed_and_corrupted(app_env):  # noqa: F811
    """The Your sentences page builds a suite under a bar told the sentences parsed, then corrupted
    (``user_suites.build``'s ``progress``), and the suite is the one built without a bar."""
    from muttlab.dashboard import services
    from muttlab.dashboard.services import user_suites
    from muttlab.dashboard.ui import COUNTED
    from muttlab.engine.suites import PART
    from muttlab.sources import load_sample

    trials = list({t.original: t for t in load_sample().trials}.values())[:250]
    sentences = [t.original for t in trials]
    data = ("text\treference\n" + "".join(f"{t.original}\t{t.refs(1)[0]}\n" for t in trials)).encode()
    told = []
    settings = services.settings()
    name, _ = user_suites.build(settings, user_suites.Visitor("s1", "198.51.100.7"), data, "pasted", "tsv", ["neg_verb", "det_sub"],
                                lambda step, total, message: told.append((step, total, message)))
    n = len(sentences)
    assert [m for _, _, m in told] == (
        [f"parsing: {k:,} of {n:,} sentences" for k in (*range(PART, n, PART), n)]
        + [f"corrupting: {k:,} of {n:,} sentences" for k in (*range(PART, n, PART), n)])
    assert [s for s, _, _ in told] == sorted(s for s, _, _ in told) and told[-1][:2] == (2 * n, 2 * n)
    assert all(COUNTED.search(m) for _, _, m in told)
    plain, _ = user_suites.build(settings, user_suites.Visitor("s2", "198.51.100.8"), data, "pasted", "tsv", ["neg_verb", "det_sub"])
    assert [t.corrupted for t in user_suites.lookup(name).trials] == [t.corrupted for t in user_suites.lookup(plain).trials]
