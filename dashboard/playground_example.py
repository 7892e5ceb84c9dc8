"""The Playground's example: what its form holds on a first visit. The server's warm-up scores it, with its
corruptions, with every metric (as it loads each), so that a first visit is answered from the score cache."""
from __future__ import annotations

REFERENCES = ("A man in a red jacket rides a bicycle along a busy street.",
              "A cyclist rides through city traffic.",
              "A person on a bike travels down a crowded road.")
CANDIDATE = "A man is riding a bicycle down the street."
