"""Language resources shared by metrics and corruptions: the spaCy pipeline, GloVe vectors, WordNet.

Each loader is cached per process and raises a clear error naming the package to install.
"""
