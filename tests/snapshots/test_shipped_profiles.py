"""The shipped robustness profiles (the ``profiles`` snapshot): a current stamp, the default metrics, and the
numbers and trial outcomes a live computation gives. When a test here fails, re-run
`MUTTLAB_DATA_DIR=../shared/data .venv/bin/python scripts/precompute_profiles.py` and commit profiles.json."""
from __future__ import annotations

import numpy as np
import pandas as pd

from muttlab import api
from muttlab.snapshots.profiles import SHIPPED
from tests.profile.conftest import profile_settings, registry  # noqa: F401 (fixtures)
from tests.snapshots.conftest import assert_current, shipped


def test_the_shipped_profiles_are_current(data_dir):
    assert_current("profiles", data_dir)
    snapshot = shipped("profiles")
    assert snapshot.stamp.rules == "tol:0.15|tie:1e-9" and snapshot.content.metrics == list(SHIPPED)
    for profile in snapshot.content.profiles.values():
        assert set(profile.trials) == {"mutt", "demetr", "mslc"} and not profile.unavailable


def test_a_shipped_profile_equals_a_live_one(profile_settings, registry, sample_settings):
    kept = shipped("profiles").content.profiles["TER"]
    live = api.profile(profile_settings, "TER", registry=registry, with_trials=True, suites=["mutt", "mslc"])
    for section in ("mutt", "mslc"):
        pd.testing.assert_frame_equal(live.sections[section], kept.sections[section])
        a, b = live.trials[section], kept.trials[section]
        assert a.keys == b.keys and np.array_equal(a.passed, b.passed) and np.array_equal(a.cell, b.cell)
    pd.testing.assert_frame_equal(live.mqm, kept.mqm)
    # On a server without the data the shipped profile is the answer, as it is.
    assert api.profile(sample_settings, "TER") == kept
