"""Attacks on the Python API's input: each call below once ended in a raw ValueError, KeyError, TypeError,
AttributeError or a library's own exception (msgpack's, spaCy's), or was silently misread (a string taken
character by character, NaN or True taken as a reference count). Now each is refused at the boundary with an
InvalidArgument that names the function and the argument (muttlab/validation.py)."""
from __future__ import annotations

import pickle

import pytest

from muttlab import api
from muttlab.errors import InvalidArgument, MuttlabError, UnknownCorruption
from muttlab.settings import load_settings
from tests.attacks.api_fuzz_cases import Fixtures, cases, run_case

SENTENCE = "a man rides a bike"
REFS = ["a man is riding a bike"]


def _grid(settings, **changes):
    return api.run_grid(settings, **{"metrics": ["BLEU-1"], "corruptions": ["neg_subj"], "ref_counts": [5],
                                     "suite": "sample", **changes})


# (call, the argument the error must name); each once raised a non-MuttlabError or gave a result for bad input.
ATTACKS = {
    "corrupt: None sentence (spaCy ValueError)": (lambda s: api.corrupt(None, REFS, ["neg_subj"], 1), "sentence"),
    "corrupt: bytes sentence (msgpack ExtraData)": (lambda s: api.corrupt(b"\x01\x02", REFS, ["neg_subj"], 1),
                                                    "sentence"),
    "corrupt: a string as references (read as characters)": (lambda s: api.corrupt(SENTENCE, "a man", ["neg_subj"], 1),
                                                             "references"),
    "corrupt: None references (TypeError)": (lambda s: api.corrupt(SENTENCE, None, ["neg_subj"], 1), "references"),
    "corrupt: a string as types (KeyError 'n')": (lambda s: api.corrupt(SENTENCE, REFS, "neg_subj", 1), "types"),
    "corrupt: None in types (KeyError None)": (lambda s: api.corrupt(SENTENCE, REFS, [None], 1), "types[0]"),
    "corrupt: NaN seed (accepted)": (lambda s: api.corrupt(SENTENCE, REFS, ["neg_subj"], float("nan")), "seed"),
    "run_grid: NaN reference count (ValueError)": (lambda s: _grid(s, ref_counts=[float("nan")]), "ref_counts[0]"),
    "run_grid: True as a reference count (read as 1)": (lambda s: _grid(s, ref_counts=[True]), "ref_counts[0]"),
    "run_grid: None metric name (AttributeError)": (lambda s: _grid(s, metrics=[None]), "metrics[0]"),
    "run_grid: None suite (AttributeError)": (lambda s: _grid(s, suite=None), "suite"),
    "run_grid: None settings (AttributeError)": (lambda s: _grid(None), "settings"),
    "load_suite: None name (TypeError)": (lambda s: api.load_suite(s, None), "name"),
    "load_suite: an int name (TypeError)": (lambda s: api.load_suite(s, 3), "name"),
    "load_settings: an unknown setting (TypeError)": (lambda s: load_settings(environ={}, bogus=1), "bogus"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_bad_arguments_are_refused_naming_the_argument(sample_settings, attack):
    call, argument = ATTACKS[attack]
    with pytest.raises(InvalidArgument) as caught:
        call(sample_settings)
    assert caught.value.argument == argument
    assert f": {argument} " in str(caught.value)


def test_a_string_of_corruptions_is_not_read_as_letters(sample_settings):
    """Once 'unknown corruption type n': the first letter of neg_subj."""
    with pytest.raises(InvalidArgument, match=r"run_grid: corruptions must be a list of names, got str 'neg_subj'"):
        _grid(sample_settings, corruptions="neg_subj")


def test_corrupt_names_an_unknown_or_extracted_type(sample_settings):
    with pytest.raises(UnknownCorruption, match="'near_syms'"):  # extracted from SICK pairs: no generator
        api.corrupt(SENTENCE, REFS, ["near_syms"], 1)


@pytest.mark.parametrize("environ, variable", [
    ({"MUTTLAB_WORKERS": "²"}, "MUTTLAB_WORKERS"),  # isdigit() is true of it, int() is not
    ({"MUTTLAB_WORKERS": "-2"}, "MUTTLAB_WORKERS"),
    ({"MUTTLAB_SESSION_TTL": "-5"}, "MUTTLAB_SESSION_TTL"),
    ({"MUTTLAB_DATA_DIR": 3}, "MUTTLAB_DATA_DIR"),
])
def test_bad_environment_names_the_variable(environ, variable):
    with pytest.raises(InvalidArgument, match=variable):
        load_settings(environ=environ)


@pytest.mark.parametrize("overrides, argument", [
    ({"workers": "two"}, "workers"), ({"tolerance": float("nan")}, "tolerance"), ({"use_cache": "no"}, "use_cache"),
    ({"data_dir": 3}, "data_dir"), ({"ref_counts": [5, float("nan")]}, "ref_counts[1]"),
])
def test_bad_overrides_name_the_setting(overrides, argument):
    with pytest.raises(InvalidArgument) as caught:
        load_settings(environ={}, **overrides)
    assert caught.value.argument == argument


def test_valid_overrides_are_normalised():
    settings = load_settings(environ={}, data_dir="/tmp/x", ref_counts=[5, 10], workers=1)
    assert str(settings.data_dir) == "/tmp/x" and settings.data_dir.name == "x"  # a Path, not a str
    assert settings.ref_counts == (5, 10) and settings.workers == 1


def test_the_error_is_a_muttlab_error_and_the_builtins_it_refines():
    error = InvalidArgument("corrupt", "seed", "must be a whole number")
    assert isinstance(error, MuttlabError) and isinstance(error, ValueError) and isinstance(error, TypeError)
    copy = pickle.loads(pickle.dumps(error))  # a worker process's error reaches the caller whole
    assert (copy.function, copy.argument, str(copy)) == ("corrupt", "seed", "corrupt: seed must be a whole number")


FUZZ_CASES = 120
FUZZ_SEED = 20261125


def test_fuzzed_calls_are_refused_with_documented_errors(tmp_path):
    """A slice of benchmarks/fuzz_api.py: every public function, one bad argument per call."""
    fixtures = Fixtures(tmp_path)
    todo = cases(FUZZ_CASES, fixtures, seed=FUZZ_SEED)
    assert len({c.function for c in todo}) == len(fixtures.calls())  # every function is reached
    outcomes = [run_case(case, fixtures) for case in todo]
    failures = [o for o in outcomes if not o.ok]
    assert not failures, "\n".join(map(repr, failures[:5]))
    assert sum(o.kind == "refused" for o in outcomes) > FUZZ_CASES // 2
