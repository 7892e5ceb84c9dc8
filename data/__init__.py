"""Package data of MUTT Lab (``muttlab.data``): the sample corpus and the shipped models.

Read it through :mod:`muttlab.resources.bundled`, never by path arithmetic.
"""
