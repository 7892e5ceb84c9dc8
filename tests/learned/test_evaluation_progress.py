"""A ReVal evaluation says what it is doing: each step as it starts and, while predicting, the sentences encoded
so far (``n of N sentences encoded``), so the Learned metrics page's bar counts instead of spinning. The reports
change no number. With the shipped LSTM model on real SICK pairs."""
from __future__ import annotations

import re

import numpy as np

from muttlab.learned import reval
from muttlab.learned.reval_training import Inputs, predict

ENCODED = re.compile(r"predicting ([\d,]+) pairs: ([\d,]+) of ([\d,]+) sentences encoded")
LIMIT = 300  # pairs of the split: several batches of sentences


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def test_an_evaluation_reports_its_steps_and_the_sentences_encoded(data_settings):
    reports = []
    counted = reval.evaluate_model(data_settings, "lstm", "test", bootstrap=0, limit=LIMIT,
                                   progress=lambda *report: reports.append(report))
    plain = reval.evaluate_model(data_settings, "lstm", "test", bootstrap=0, limit=LIMIT)
    assert np.array_equal(counted.predictions, plain.predictions) and counted.pearson == plain.pearson
    messages = [message for _, _, message in reports]
    assert messages[0].startswith("reading the pairs") and messages[1] == "loading the GloVe vectors"
    assert messages[-1].startswith("bootstrapping")
    found = [ENCODED.fullmatch(m) for m in messages[2:-1]]
    assert all(found), messages
    pairs = reval.load_sick_data(data_settings, limit=LIMIT).splits["test"]
    sentences = len({s for p in pairs for s in (p.sentence_a, p.sentence_b)})
    done = [_count(f.group(2)) for f in found]
    assert {_count(f.group(1)) for f in found} == {LIMIT} and {_count(f.group(3)) for f in found} == {sentences}
    assert done[0] == 0 and done[-1] == sentences and len(done) >= 3 and done == sorted(done)
    # The bar moves within the prediction and never back.
    fractions = [step / total for step, total, _ in reports]
    assert fractions == sorted(fractions) and fractions[-1] < 1


def test_a_smaller_encoding_batch_changes_predictions_by_rounding_only(data_settings):
    """The evaluation encodes 128 sentences a batch (a report every few seconds) where training's predictions
    take 512: the same predictions but for float32 rounding (measured: at most 4.8e-7 apart)."""
    data = reval.load_sick_data(data_settings, limit=LIMIT)
    net = reval.load_checkpoint(reval.find_checkpoint("lstm", None))
    inputs = Inputs(data.trees, reval._word_vectors())
    pairs = [(p.sentence_a, p.sentence_b) for p in data.splits["test"]]
    np.testing.assert_allclose(predict(net, pairs, inputs, batch_size=128), predict(net, pairs, inputs),
                               rtol=0, atol=1e-6)

