"""Malformed files for every suite format and upload path, for tests/attacks/test_reader_fuzz.py and
``benchmarks/fuzz_api.py --readers``.

A case starts from a valid file of one reader (a suite in each format ``api.read_suite`` reads, from a path or
from the bytes of an upload — for MSLC24-B, a pair's ``types.tsv`` beside its three valid text files, read from
the pair's folder or as the four files uploaded together; a visitor's own sentences in JSONL, CSV or TSV; a
pair-store import; a ΔBLEU input)
and applies one to three mutations that know its structure: a JSON value nested thousands deep, a number of
thousands of digits (or NaN, 1e999), a field of a megabyte, bytes of another encoding (Latin-1, UTF-16, broken
UTF-8, a lone surrogate escape, NUL), the file cut anywhere (inside a character too), a value of the wrong type,
a missing or extra column, rows past the pair cap. The same seed gives the same cases.

A case passes when the reader returns (the rows it could not read each listed with its line), or refuses the
file with an error the project documents (:func:`tests.attacks.api_fuzz_cases.documented`) whose message names
the file and, when the file has lines, the line. Anything else (a built-in exception, a refusal that does not
say where) fails, and so does a case still running after the timeout (a hang). Runs reuse the API fuzz's
classification and time-out (:mod:`tests.attacks.api_fuzz_cases`).
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tests.attacks.api_fuzz_cases import Outcome, classified

# The pair cap during a campaign: small, so that "too many rows" costs a few hundred rows, not 100,001.
FUZZ_MAX_PAIRS = 300

_TRIAL = {"id": "typo/1", "corruption": "typo", "original": "A dog runs on the grass.",
          "corrupted": "A dgo runs on the grass.", "references": ["A dog is running.", "A dog runs."],
          "human_score": 3.5}
_PAIR = {"phenomenon": "negation", "good": "A dog runs.", "incorrect": "No dog runs.",
         "references": ["A dog is running."], "source": "Ein Hund rennt.", "lp": "de-en", "id": "n1"}
_DEMETR = {"src_sent": "Ein Hund rennt.", "eng_sent": "A dog runs.", "mt_sent": "A dog is running.",
           "pert_sent": "A cat is running.", "pert_check": True, "severity": "major", "pert_id": 3,
           "pert_name": "noun swap", "id": 1}
_SENTENCE = {"id": "s1", "text": "A man is riding a bike.", "references": ["A man rides a bicycle."]}
_DBLEU = {"hypothesis": "a man rides a bike", "references": [["a man rides a bicycle", 1.0], ["a dog", -0.5]]}
# MSLC24-B: the three text files of one pair (en-de), left valid; the case mutates its types.tsv.
MSLC_TEXTS = {"source.txt": "A dog runs.\n\nThe cat sleeps.\n",
              "reference.txt": "Ein Hund rennt.\n\nDie Katze schläft.\n",
              "hypothesis.txt": "\nEs regnet.\nThe cat sleeps.\n"}
MSLC_TYPES = ("1\tempty-hypothesis\ts-sent\tr-sent\tempty\n2\tempty-source-and-reference\tempty\tempty\tr-sent\n"
              "3\tuntranslated\ts-sent\tr-sent\ts-sent\n")


def _jsonl(record: dict, n: int = 3) -> str:
    return "".join(json.dumps({**record, **({"id": f"{record['id']}-{i}"} if "id" in record else {})},
                              ensure_ascii=False) + "\n" for i in range(n))


def _tsv(header: list[str], row: list[str], n: int = 3) -> str:
    return "\t".join(header) + "\n" + "".join("\t".join(row) + "\n" for _ in range(n))


# reader name -> (valid file text, file suffix, whether it is JSON)
SEEDS: dict[str, tuple[str, str, bool]] = {
    "trials-jsonl": (_jsonl(_TRIAL), ".jsonl", True),
    "contrastive-jsonl": (_jsonl(_PAIR), ".jsonl", True),
    "wmt-tsv": (_tsv(["lp", "source", "good", "incorrect", "reference", "phenomena"],
                     ["de-en", "Ein Hund rennt.", "A dog runs.", "No dog runs.", "A dog is running.", "negation"]),
                ".tsv", False),
    "aces-tsv": (_tsv(["source", "good-translation", "incorrect-translation", "reference", "phenomena", "langpair"],
                      ["Ein Hund rennt.", "A dog runs.", "No dog runs.", "A dog is running.", "negation", "de-en"]),
                 ".tsv", False),
    "demetr-json": (json.dumps([{**_DEMETR, "id": i} for i in range(3)], indent=1), ".json", True),
    "sentences-jsonl": (_jsonl(_SENTENCE), ".jsonl", True),
    "sentences-csv": ("id,text,reference,reference\ns1,A man is riding a bike.,A man rides a bicycle.,A man rides.\n"
                      "s2,\"A dog, brown, runs.\",A dog runs.,A brown dog runs.\n", ".csv", False),
    "sentences-tsv": (_tsv(["id", "text", "reference"], ["s1", "A man is riding a bike.", "A man rides."]),
                      ".tsv", False),
    "pair-import": (_jsonl(_TRIAL), ".jsonl", True),
    "dbleu-jsonl": (_jsonl(_DBLEU), ".jsonl", True),
    "dbleu-tsv": ("a man rides a bike\ta man rides a bicycle\t1.0\ta dog\t-0.5\n" * 3, ".tsv", False),
    "mslc24-b": (MSLC_TYPES, ".tsv", False),
}


def _read(reader: str, data: bytes, path: Path, via: str):
    """Hand ``data`` to ``reader`` as the lab does: the bytes of an upload, or the file at ``path``."""
    from muttlab import api

    if reader.startswith("sentences-"):
        from muttlab.suites.user import parse_user_sentences, read_user_sentences
        kind = reader.split("-")[1]
        return parse_user_sentences(data, kind, path.name) if via == "upload" else read_user_sentences(path)
    if reader == "pair-import":
        from muttlab.pairs.store import parse_jsonl
        return parse_jsonl(path, raw=data if via == "upload" else None)
    if reader.startswith("dbleu-"):
        from muttlab.human.dbleu_io import read_weighted_segments
        return read_weighted_segments(path)
    fmt = None if via == "detect" else reader
    if reader == "mslc24-b":  # the pair's four files: uploaded together, or its folder
        files = {f"en-de/{name}": text.encode("utf-8") for name, text in MSLC_TEXTS.items()}
        return api.read_suite({**files, "en-de/types.tsv": data} if via == "upload" else path.parent, format=fmt)
    return api.read_suite(data if via == "upload" else path, format=fmt)


# --------------------------------------------------------------------------- mutations

def _json_values(text: str) -> list[re.Match]:
    """Where a JSON string or number value stands (after a ':' or inside a list)."""
    return list(re.finditer(r'(?<=[:\[,] )("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)|(?<=[:\[,])("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)',
                            text))


def _replace_value(text: str, rng: random.Random, new: str) -> str:
    spots = _json_values(text)
    if not spots:
        return new + text
    spot = rng.choice(spots)
    return text[:spot.start()] + new + text[spot.end():]


def _replace_cell(text: str, rng: random.Random, new: str) -> str:
    lines = text.split("\n")
    row = rng.randrange(len(lines))
    cells = lines[row].split("\t") if "\t" in lines[row] else lines[row].split(",")
    sep = "\t" if "\t" in lines[row] else ","
    cells[rng.randrange(len(cells))] = new
    lines[row] = sep.join(cells)
    return "\n".join(lines)


def _put(text: str, is_json: bool, rng: random.Random, new: str) -> str:
    return _replace_value(text, rng, new) if is_json else _replace_cell(text, rng, new)


def deep(text, is_json, rng):
    depth = rng.choice([50, 101, 999, 1500, 200_000])
    return _put(text, is_json, rng, "[" * depth + "1" + "]" * depth)


def deep_object(text, is_json, rng):
    depth = rng.choice([150, 2_000, 100_000])
    return _put(text, is_json, rng, '{"a": ' * depth + "1" + "}" * depth)


def huge_number(text, is_json, rng):
    digits = rng.choice([20, 400, 999, 1001, 4300, 5000, 100_000])
    number = rng.choice(["9" * digits, "-" + "9" * digits, "1." + "5" * digits, "1e" + "9" * min(digits, 400),
                         "NaN", "Infinity", "-Infinity", "1e999", "0" * digits + "1"])
    return _put(text, is_json, rng, number)


def huge_field(text, is_json, rng):
    size = rng.choice([2_001, 50_000, 1_000_000])
    word = rng.choice(["word ", "x", "🐕", "\u2028", "\t", "\\", '"'])
    field = (word * (size // len(word) + 1))[:size]
    return _put(text, is_json, rng, json.dumps(field) if is_json else field)


def wrong_type(text, is_json, rng):
    return _put(text, is_json, rng, rng.choice(["null", "true", "[]", "{}", "[null]", '{"x": 1}', "12", '""', '" "',
                                                "[[]]", '["a", 1]']))


def lone_surrogate(text, is_json, rng):
    return _put(text, is_json, rng, rng.choice(['"\\ud800"', '"a\\udfffb"', '"\\u0000"', '"\\u202e\\u2066"']))


def drop_line(text, is_json, rng):
    lines = text.split("\n")
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def duplicate_rows(text, is_json, rng):
    if len(text) > 100_000:  # past the pair cap in rows, not in megabytes
        return text
    lines = [line for line in text.split("\n") if line.strip()]
    if is_json and text.lstrip().startswith("["):
        records = json.loads(text) if _valid_json(text) else []
        return json.dumps(records * (FUZZ_MAX_PAIRS // max(1, len(records)) + 2)) if records else text
    body = lines[1:] if len(lines) > 1 and not is_json else lines
    head = lines[:1] if len(lines) > 1 and not is_json else []
    return "\n".join(head + body * (FUZZ_MAX_PAIRS // max(1, len(body)) + 2)) + "\n"


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def columns(text, is_json, rng):
    lines = text.split("\n")
    row = rng.randrange(len(lines))
    lines[row] = rng.choice([lines[row] + "\textra", lines[row].replace("\t", "", 1), "\t" * 40, "a\tb", ",,,,",
                             lines[row].replace(",", "\t"), '"unclosed,quote'])
    return "\n".join(lines)


def duplicate_key(text, is_json, rng):
    return text.replace("{", '{"id": "dup", "id": 7, ', 1)


def blank(text, is_json, rng):
    return rng.choice(["", " ", "\n\n\n", "\ufeff", "[]", "{}", "null", "\t\n", "# only a comment\n"])


TEXT_MUTATIONS: list[Callable] = [deep, deep_object, huge_number, huge_field, wrong_type, lone_surrogate, drop_line,
                                  duplicate_rows, columns, duplicate_key, blank]


def latin1(data, rng):
    at = rng.randrange(len(data) + 1)
    return data[:at] + "Fahrräder é".encode("latin-1") + data[at:]


def utf16(data, rng):
    return data.decode("utf-8", "replace").encode(rng.choice(["utf-16", "utf-16-le", "utf-32"]))


def broken_utf8(data, rng):
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\x80\x80", b"\x00",
                                   b"\xef\xbb\xbf", b"\r", b"\r\n\r\n", b"\x1a"]) + data[at:]


def truncate(data, rng):
    return data[:rng.randrange(len(data) + 1)]


def crlf(data, rng):
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r", "\u2028".encode(), "\x85".encode()]))


BYTE_MUTATIONS: list[Callable] = [latin1, utf16, broken_utf8, truncate, crlf]


@dataclass
class Case:
    reader: str
    via: str  # "upload" (the bytes), "path" (a file), "detect" (a file whose format is told from it)
    mutations: tuple[str, ...]
    data: bytes

    def __repr__(self) -> str:
        return f"{self.reader} via {self.via} after {'+'.join(self.mutations)} ({len(self.data):,} bytes)"


def _vias(reader: str) -> list[str]:
    if reader.startswith("dbleu-"):
        return ["path"]
    if reader in ("trials-jsonl", "contrastive-jsonl", "wmt-tsv", "aces-tsv", "demetr-json", "mslc24-b"):
        return ["upload", "path", "detect"]
    return ["upload", "path"]


def cases(n: int, seed: int) -> list[Case]:
    """``n`` cases, every reader and every mutation reached, the same for the same seed."""
    rng = random.Random(seed)
    names = sorted(SEEDS)
    mutations = [m.__name__ for m in TEXT_MUTATIONS + BYTE_MUTATIONS]
    out = []
    for i in range(n):
        reader = names[i % len(names)]
        text, _, is_json = SEEDS[reader]
        chosen = [mutations[i % len(mutations)]] + rng.sample(mutations, rng.randrange(3))
        for name in chosen:
            if name in {m.__name__ for m in TEXT_MUTATIONS}:
                text = globals()[name](text, is_json, rng)
        data = text.encode("utf-8", "surrogatepass")
        for name in chosen:
            if name in {m.__name__ for m in BYTE_MUTATIONS}:
                data = globals()[name](data, rng)
        out.append(Case(reader, rng.choice(_vias(reader)), tuple(chosen), data))
    return out


def _names_where(exc, path: Path, case: Case) -> bool:
    """The refusal names the file (an upload of bytes is called ``upload``) and, when it has lines, one of them."""
    message = str(exc)
    named = path.name in message or (case.via == "upload" and "upload" in message)
    return named and (not case.data.strip() or re.search(r"\bline \d", message) is not None)


def _left_out(result) -> list:
    """The rows a reader left out, each of which must carry its line."""
    if isinstance(result, tuple):  # the pair import's (records, report)
        return list(result[1].errors)
    return list(getattr(result, "problems", None) or [])


def run_case(case: Case, folder: Path, timeout: int = 60) -> Outcome:
    """Read the case's file as the lab does, under the campaign's pair cap, killed (SIGALRM) after ``timeout``."""
    from muttlab.settings import Limits, active_limits, set_limits

    path = folder / f"{case.reader}{SEEDS[case.reader][1]}"
    if case.reader == "mslc24-b":  # a pair's folder: its types.tsv is the case, beside the valid text files
        path = folder / "mslc24-b" / "en-de" / "types.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        for name, text in MSLC_TEXTS.items():
            (path.parent / name).write_text(text, encoding="utf-8")
    path.write_bytes(case.data)

    def read() -> str | None:
        problems = _left_out(_read(case.reader, case.data, path, case.via))
        unplaced = [p for p in problems if not isinstance(getattr(p, "line", None), int)]
        return f"a row left out without its line: {unplaced[0]!r}" if unplaced else None

    previous_limits = active_limits()
    set_limits(Limits(max_pairs=FUZZ_MAX_PAIRS))
    try:
        return classified(case, read, lambda exc: _names_where(exc, path, case), timeout)
    finally:
        set_limits(previous_limits)
