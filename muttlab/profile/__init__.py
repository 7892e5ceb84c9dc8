"""A metric's robustness across everything the lab measures: unit tests, challenge sets and the
meta-evaluation against expert judgments, side by side; and how its verdicts move under another tie rule.

* :mod:`~muttlab.profile.outcomes`: every trial of a suite (MUTT, DEMETR, MSLC24-B, a suite file) judged for a
  metric under the settings' rules, through the score cache;
* :mod:`~muttlab.profile.mslc`: MSLC24-B's edge cases as contrastive trials;
* :mod:`~muttlab.profile.build`: a :class:`~muttlab.profile.result.Profile` from what ships and what is computed;
* :mod:`~muttlab.profile.compare`: two profiles compared (McNemar on paired trials, the meta-evaluation's tests);
* :mod:`~muttlab.profile.rule_change`: accuracies under the default tie rule and another (a calibrated ε).

docs/meta_eval.md ("Tie-calibrated verdicts", "Robustness profiles") says how each number is computed.
"""
