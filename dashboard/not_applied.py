"""Why a corruption generator left a sentence alone: what each generator looks for and did not find (it
returned None). The Playground lists the chosen generators that did not apply with these reasons, so a type
never vanishes without a word. No Streamlit here."""
from __future__ import annotations

from typing import Mapping, Sequence

# One reason per generator of muttlab.corruptions.generate, in the words of its docstring.
REASONS: dict[str, str] = {
    "double_PP": "no prepositional phrase found",
    "remove_prep": "no prepositional phrase found",
    "swap_chunks": "fewer than two different chunks to re-order",
    "subj_obj_swap": "no noun subject followed by a noun direct object of the same number",
    "number_change": 'no number word, and no singular object noun after "a"/"an"',
    "gender_swap": "no gendered word, or words of both genders",
    "drop_content": "no adjective or noun modifier to drop",
    "typo": "no content word of four or more letters to misspell",
    "neg_verb": 'no main verb to negate ("is riding", or a simple present or past verb with its subject)',
    "neg_subj": 'the sentence does not open "A/The/One/Two ... is/are <verb>-ing"',
    "det_sub": 'no article ("a", "an", "the") before a noun',
}


def not_applied(chosen: Sequence[str], applied: Sequence[str], labels: Mapping[str, str]) -> list[tuple[str, str]]:
    """(label, reason) per chosen type that produced no corruption, in the chosen order."""
    done = set(applied)
    return [(labels.get(t, t), REASONS.get(t, "the generator found nothing to change"))
            for t in chosen if t not in done]
