"""Names in a conversation: the customer's own ("my name is ..."), someone they name ("my
daughter Isla"), the person they ask to see, and where a reply addresses or names someone."""

from __future__ import annotations

import re

from judge.customer_details.days import MONTHS, WEEKDAY

NAME = re.compile(
    r"\b(?i:my name is|my name's|name is|name's|names|name:|i am|i'm|im|this is|it's|its|"
    r"call me)\s+"
    r"([A-Z][a-zA-Z'\-]+(?:\s+[A-Z][a-zA-Z'\-]+)?)"
)
NAME_INTRO = re.compile(r"^\s*(?:it's\s+|its\s+)?([A-Z][a-z'\-]+\s+[A-Z][a-zA-Z'\-]+)\s*[,.!]?\s*$")
# Where a bot addresses or restates the customer: "Thanks, Mary", "Dear Mr Byrne", "for Mary".
ADDRESS = re.compile(
    r"\b(?i:thanks|thank you|hi|hello|hey|dear|great|perfect|lovely|welcome|sorry|noted|ok|"
    r"okay|got it),?\s+([A-Z][a-zA-Z'\-]+)\b"
    # A name used to address someone ends the phrase: "Thanks, Mary!", "Hi Mary, ...".
    r"(?=\s*(?:[,.!?;:—–]|-\s|$)|\s+for\b)"
)
NOT_NAMES = frozenset(
    [
        "i",
        "im",
        "i'm",
        "it",
        "its",
        "looking",
        "calling",
        "here",
        "interested",
        "new",
        "sorry",
        "just",
        "available",
        "free",
        "booked",
        "back",
        "hoping",
        "trying",
        "wondering",
        "a",
        "the",
        "not",
        "so",
        "very",
        "in",
        "on",
        "at",
        # Capitalized at the start of a sentence, never a name: "What's your name?"
        "what",
        "that",
        "there",
        "here",
        "who",
        "where",
        "when",
        "today",
        "tomorrow",
        "everyone",
        "everything",
        "let",
        "one",
    ]
)
# Someone the customer names besides themselves: "my daughter Isla", "our dog Biscuit".
RELATIVE = re.compile(
    r"\b(?i:my|our)\s+(?i:daughter|son|wife|husband|partner|mum|mom|dad|father|mother|friend|"
    r"boy|girl|kid|child|baby|dog|cat|puppy|pet|horse|colleague|boss|sister|brother)\s+"
    r"([A-Z][a-z'\-]+)"
)
# The bot naming someone in a restatement: "for Ella's lessons", "booked under Sam".
NAMED = re.compile(
    r"\b(?:for|under|with|named|called)\s+([A-Z][a-z\-]+)(?:'s)?\b|\b([A-Z][a-z\-]+)'s\b"
)


# The person the customer asks to see: "a skin fade with Kemal", "can I see Dr Patel".
_WITH = re.compile(r"\b(?:with|see)\s+(?:(?:Dr|Dr\.|Mr|Mrs|Ms|Miss)\s+)?([A-Z][a-z'\-]+)\b")


def people_named(text: str) -> list[str]:
    """Capitalized names after "with"/"see" in text, days, months and common words aside."""
    return [
        m.group(1)
        for m in _WITH.finditer(text)
        if m.group(1).casefold() not in NOT_NAMES
        and WEEKDAY.fullmatch(m.group(1)) is None
        and m.group(1)[:3].casefold() not in MONTHS
    ]
