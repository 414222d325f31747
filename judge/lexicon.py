"""English word frequencies, for telling a misspelling from a word.

The list is pyspellchecker's English dictionary (about 160,000 words with counts from subtitles,
filtered by SCOWL; American spellings). Loaded once per process on first use (about 0.2 s),
deterministic and offline.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping, Sequence

# A word this frequent is everyday English: a near-miss of it in a KB is a misspelling.
EVERYDAY = 500

# British and Irish spellings the (American) list lacks and that no regular rule of
# `judge.kb_noise.typos._spelling_variant` (colour, centre, organise, travelled ...) derives.
_BRITISH_TEXT = """
    grey greys pyjamas kerb kerbs cheque cheques tyre tyres aluminium programme programmes
    catalogue catalogues manoeuvre plough draught draughts storey storeys whilst amongst learnt
    spelt dreamt mum mums jewellery cosy sceptical moustache practise enrol enrolment fulfil
    instil mould moulds smoulder moult aeroplane oestrogen paediatric paediatrics anaemia
    anaesthetic anaesthetist orthopaedic haemorrhage diarrhoea oesophagus foetus gaol kilometre
    kilometres metre metres litre litres fibre theatre theatres centre centres colour colours
    favour favourite honour humour harbour neighbour flavour rumour labour behaviour savoury
    organise organised realise realised apologise analyse licence defence offence pretence
"""
_BRITISH = frozenset(_BRITISH_TEXT.split())


@functools.cache
def _frequencies() -> Mapping[str, int]:
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=1).word_frequency.dictionary


def frequency(word: str) -> int:
    """How often `word` (casefolded) occurs in the list; 0 when it is not an English word."""
    folded = word.casefold()
    return int(_frequencies().get(folded, 0)) or (EVERYDAY if folded in _BRITISH else 0)


@functools.cache
def _sorted_everyday() -> Sequence[str]:
    return sorted(w for w, n in _frequencies().items() if n >= EVERYDAY)


def clips(word: str) -> bool:
    """`word` is the start of a longer everyday word: a clipping ("intro", "promo", "physio"),
    not a misspelling."""
    folded = word.casefold()
    words = _sorted_everyday()
    at = bisect.bisect_right(words, folded)
    return at < len(words) and words[at].startswith(folded)
