"""The metric unit-test engine: suites, the runner and its cache, accuracy.

Data flows one way: :mod:`~muttlab.sources` and :mod:`~muttlab.engine.suites` build
:class:`~muttlab.trials.Trial` lists, :mod:`~muttlab.engine.runner` scores them with the metrics
(through :mod:`~muttlab.engine.cache`), and :mod:`~muttlab.engine.accuracy` turns scores into verdicts
and accuracy cells.
"""
