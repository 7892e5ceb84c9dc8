"""Suite files: a user's own trials and published contrastive challenge sets (WMT TSV, ACES, DEMETR, JSONL, and
MSLC24-B's folder of pairs).

    from muttlab.suites import read_suite
    suite_file = read_suite("aces.tsv")          # or read_suite(uploaded_bytes, format="aces-tsv")
    suite_file.suite.trials, suite_file.problems  # trials, and the rows left out with their line numbers
    read_suite("mslc/2024/data/MSLC-B")             # a folder: MSLC24-B (or {"en-de/types.tsv": b"...", ...})
"""
from muttlab.suites.model import CONTRASTIVE_FORMATS, FOLDER_FORMATS, FORMATS, MSLC24_B, RowProblem, SuiteFile
from muttlab.suites.readers import detect_format, read_suite

__all__ = ["CONTRASTIVE_FORMATS", "FOLDER_FORMATS", "FORMATS", "MSLC24_B", "RowProblem", "SuiteFile", "detect_format",
           "read_suite"]
