"""Training and tuning of learned metrics: ReVal (:mod:`~muttlab.learned.reval`), the multi-level
metrics' classifiers and weights (:mod:`~muttlab.learned.multilevel`) and W2V-AVG's word vectors
(:mod:`~muttlab.learned.vectors`). The metrics themselves live in :mod:`muttlab.metrics`.
"""
