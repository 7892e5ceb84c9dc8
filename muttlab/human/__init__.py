"""Human-judgment studies: how metric scores relate to what people said.

* :mod:`muttlab.human.flickr` — Kendall τ of every metric with Flickr8K-Expert (τ-c) and
  Flickr8K-CrowdFlower (τ-b) ratings, with bootstrap CIs (:func:`~muttlab.human.flickr.flickr_correlations`).
* :mod:`muttlab.human.sick` — MUTT §5's inconsistency study on SICK: per corruption type, the gold
  relatedness and the metrics' scores side by side, their histograms and their pairwise correlation matrix
  (:func:`~muttlab.human.sick.sick_study`).
* :mod:`muttlab.human.dbleu` — the ΔBLEU observation-unit correlation study (Galley et al. 2015, §5–6)
  on a weighted multi-reference set built from Flickr8K-Expert, or on a user's ΔBLEU file
  (:func:`~muttlab.human.dbleu.flickr_expert_set` / :func:`~muttlab.human.dbleu.user_set`, then
  :func:`~muttlab.human.dbleu.unit_study`).

:mod:`muttlab.human.scoring` picks the available metrics (skipping, with the reason, those whose requirement
is missing). The Flickr8K and SICK studies take a :class:`~muttlab.settings.Settings` and score through the
runner's cache (:func:`muttlab.engine.runner.score_batches`); the ΔBLEU study works on precomputed n-gram statistics.
All return dataclasses holding pandas DataFrames, which the CLI
(``muttlab correlate …``) and the dashboard render. The statistics come from :mod:`muttlab.stats`.
Every study is registered once in :mod:`muttlab.human.studies`.
"""
