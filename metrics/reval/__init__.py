"""ReVal: learned sentence-similarity metrics (Gupta et al., EMNLP 2015).

A sequential LSTM or a child-sum dependency Tree-LSTM (Tai et al., ACL 2015) encodes each sentence from
frozen GloVe vectors; a small similarity head predicts a distribution over the relatedness classes 1..5.

Modules:
  trees: dependency trees from spaCy and level-by-level batching of many trees.
  model: the encoders, the similarity head and the loss.
  config: the training settings (no torch needed to read them).
  train: the training loop over plain (sentence_a, sentence_b, score) lists, and evaluation.
  metric: :class:`ReVal`, the trained model behind the :class:`~muttlab.metrics.base.Metric` interface.
"""
