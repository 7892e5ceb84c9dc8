"""Meta-evaluation: how metrics agree with human judgments of real system outputs (expert MQM, a user's own
study), as WMT's metrics task measures it.

Data, matrices and statistics are kept apart:

* readers turn files into :class:`~muttlab.meta.judgments.Judgments` (systems × items): :mod:`~muttlab.meta.mqm`
  (MQM error files) and :mod:`~muttlab.meta.generic` (the documented TSV / JSONL format of one's own judgments);
* :mod:`~muttlab.meta.statistics` holds the pure statistics over (gold, metric) matrices (pairwise accuracy
  with tie calibration, τ, r, system-level accuracy, significance, clusters);
* :mod:`~muttlab.meta.evaluate` scores every metric that can score the target language (through the score
  cache), adds the baseline rows and computes the statistics into a :class:`~muttlab.meta.result.MetaEvaluation`;
* :mod:`~muttlab.meta.calibration` turns a result into the tie calibrations the unit tests can be judged with.

docs/meta_eval.md says how each number is computed.
"""
