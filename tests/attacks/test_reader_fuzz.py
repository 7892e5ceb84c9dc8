"""Fuzz every suite format and upload path with malformed files (tests/attacks/reader_fuzz_cases.py): deep
nesting, huge numbers, huge fields, mixed encodings, truncation, wrong types and columns, rows past the pair cap.

The whole campaign runs here (a fixed seed, 1,200 cases, a few seconds); ``benchmarks/fuzz_api.py --readers N
--seed S`` runs it with any size and seed. Played as an anonymous visitor uploading a file (the Challenge and
Your-sentences pages, the bytes as the page hands them over) and as a user of the command line (the same files
by path): no case may end in an exception the project does not document, hang, or be refused without naming
the file and the line.
"""
from __future__ import annotations

from tests.attacks.reader_fuzz_cases import BYTE_MUTATIONS, SEEDS, TEXT_MUTATIONS, cases, run_case

CASES = 1200
SEED = 20261127


def test_fuzzed_files_are_read_or_refused_naming_file_and_line(tmp_path):
    todo = cases(CASES, SEED)
    assert {c.reader for c in todo} == set(SEEDS)  # every format and upload path
    assert {m for c in todo for m in c.mutations} == {m.__name__ for m in TEXT_MUTATIONS + BYTE_MUTATIONS}
    assert {c.via for c in todo} == {"upload", "path", "detect"}
    outcomes = [run_case(case, tmp_path) for case in todo]
    failures = [o for o in outcomes if not o.ok]
    assert not failures, "\n".join(map(repr, failures[:5]))
    refused = sum(o.kind == "refused" for o in outcomes)
    assert CASES // 4 < refused < CASES  # the campaign reaches both the readers' refusals and what they read
