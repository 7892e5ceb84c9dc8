"""What a suite file becomes: trials plus what the trial type does not carry (source sentence, target language),
the format it was read as, and the rows that could not be read."""
from __future__ import annotations

from dataclasses import dataclass, field

from muttlab.trials import Suite

# Formats read by :func:`muttlab.suites.read_suite`.
TRIALS_JSONL = "trials-jsonl"          # MUTT Lab's own suite file (``muttlab corrupt --output``)
CONTRASTIVE_JSONL = "contrastive-jsonl"  # good / incorrect / references / phenomenon [/ source / lp]
WMT_TSV = "wmt-tsv"                    # WMT challenge-set TSV: lp, source, good, incorrect, reference, phenomena
ACES_TSV = "aces-tsv"                  # ACES: source, good-translation, incorrect-translation, reference, phenomena, langpair
DEMETR_JSON = "demetr-json"            # DEMETR: a JSON list of src_sent / eng_sent / mt_sent / pert_sent records
MSLC24_B = "mslc24-b"                  # MSLC24-B: a folder per pair of source / reference / hypothesis .txt + types.tsv
FORMATS = (TRIALS_JSONL, CONTRASTIVE_JSONL, WMT_TSV, ACES_TSV, DEMETR_JSON, MSLC24_B)
# Formats of published contrastive challenge sets: one phenomenon per pair, rule strict good > incorrect.
CONTRASTIVE_FORMATS = (CONTRASTIVE_JSONL, WMT_TSV, ACES_TSV, DEMETR_JSON, MSLC24_B)
# Formats read from a folder (or from its files' contents, keyed by their paths inside it), not from one file.
FOLDER_FORMATS = (MSLC24_B,)


@dataclass(frozen=True)
class RowProblem:
    """A row that was left out, with its line (record number for JSON lists) and what is wrong with it."""

    line: int
    problem: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.problem}"


@dataclass
class SuiteFile:
    """A suite read from a file.

    Attributes:
      suite: the trials (for a challenge set: original = good translation, corrupted = incorrect one,
        corruption = the phenomenon).
      format: one of :data:`FORMATS`.
      sources: trial id -> source sentence, where the file has one.
      languages: trial id -> target language (ISO 639-1), where the file says; English otherwise.
      problems: rows left out, each with its line number.
      not_applied: phenomenon -> how many records the data set marks as not applied (DEMETR's
        ``pert_check`` false): no test items, counted so that every report shows them.
    """

    suite: Suite
    format: str
    sources: dict[str, str] = field(default_factory=dict)
    languages: dict[str, str] = field(default_factory=dict)
    problems: list[RowProblem] = field(default_factory=list)
    not_applied: dict[str, int] = field(default_factory=dict)

    @property
    def contrastive(self) -> bool:
        return self.format in CONTRASTIVE_FORMATS

    def language(self, trial_id: str) -> str:
        return self.languages.get(trial_id, "en")

    def target_languages(self) -> tuple[str, ...]:
        """The target languages of the suite's trials, sorted (English where the file names none)."""
        return tuple(sorted({self.language(t.id) for t in self.suite.trials})) or ("en",)
