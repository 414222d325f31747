"""The word lists of the contradiction scorer: function words, negations, opinion words
(positive, negative, rejection), first-person words and antonyms."""

from __future__ import annotations

import re

from judge.support import stem

# Words that carry no topic: function words, pronouns, fillers, very common verbs and
# adjectives. Negations are handled separately and never count as shared content.
_STOP_TEXT = """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself nor now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves i'm i've i'd i'll it's that's you're you've lol haha yeah yes oh well really
    think know get got also much go going one thing things lot lots alot sure okay ok wow cool
    nice im ive thats like love want kind sort pretty quite stuff people day time good great
    make made way even still"""
STOPWORDS = frozenset(_STOP_TEXT.split())
_NEGATION_TEXT = """not no never nothing nobody none neither nor without cannot nope hardly
    barely rarely dont cant wont isnt arent wasnt werent didnt doesnt havent hasnt hadnt
    couldnt wouldnt shouldnt aint donot"""
NEGATIONS = frozenset(_NEGATION_TEXT.split())
# Counterfactual or ended states read as a negation: "I wish I had a dog" = I have none.
NEGATING_PHRASE = re.compile(
    r"\b(?:i wish|if only|anything but|no longer|not anymore|any ?more)\b", re.IGNORECASE
)
# Set phrases with a negation word that negate nothing.
NOT_NEGATING = re.compile(
    r"\b(?:no|not an?) (?:problem|worries|worry|doubt|wonder)\b|\bno need to worry\b",
    re.IGNORECASE,
)
_POSITIVE_TEXT = """love loved loves like liked likes enjoy enjoyed enjoys enjoying great good
    best awesome amazing fun happy glad favorite favourite fantastic wonderful nice beautiful
    interesting exciting excited cool perfect prefer adore fan agree easy safe healthy delicious
    lucky brave proud fond better excellent incredible lovely pleased satisfying comfortable
    worth hooked passionate welcome free"""
_NEGATIVE_TEXT = """hate hated hates dislike disliked awful terrible bad worst boring bored sad
    scared afraid fear terrified horrible annoying ugly hard difficult dangerous unhealthy
    disgusting gross overrated waste lonely angry upset unlucky sick tired disagree worse poor
    stupid useless pointless scary creepy lack lacks tough headache nightmare miserable painful
    pain regret unfortunately depressed depressing ridiculous silly weird expensive costly"""
POSITIVE = frozenset(stem(w) for w in _POSITIVE_TEXT.split())
NEGATIVE = frozenset(stem(w) for w in _NEGATIVE_TEXT.split())
_REJECTION_TEXT = "hate hated hates dislike overrated never nobody nothing"
REJECTION = frozenset(stem(w) for w in _REJECTION_TEXT.split())
_FIRST_PERSON_TEXT = "i i'm i've i'd i'll im ive me my mine we our us"
FIRST_PERSON = frozenset(_FIRST_PERSON_TEXT.split())
_ANTONYM_TEXT = """love-hate like-hate like-dislike love-dislike enjoy-hate always-never
    good-bad great-terrible great-awful best-worst happy-sad agree-disagree true-false easy-hard
    easy-difficult big-small big-little old-young old-new hot-cold fast-slow rich-poor
    early-late many-few more-less cheap-expensive cheap-costly fun-boring interesting-boring
    exciting-boring safe-dangerous win-lose won-lost remember-forget open-closed married-single
    love-afraid love-scared love-terrified tall-short long-short high-low healthy-unhealthy
    alive-dead same-different all-none beautiful-ugly clean-dirty light-dark most-least
    gain-lose start-stop begin-end buy-sell bought-sold accept-refuse allowed-forbidden
    alone-together shy-outgoing lazy-active sober-drunk hungry-full everything-nothing
    often-rarely often-never lucky-unlucky glad-sorry pass-fail passed-failed hired-fired
    quiet-loud common-rare real-fake natural-artificial strong-weak full-empty wet-dry
    include-exclude included-excluded free-paid required-optional"""
ANTONYMS: dict[str, frozenset[str]] = {}
for _pair in _ANTONYM_TEXT.split():
    _a, _b = (stem(w) for w in _pair.split("-"))
    ANTONYMS[_a] = ANTONYMS.get(_a, frozenset()) | {_b}
    ANTONYMS[_b] = ANTONYMS.get(_b, frozenset()) | {_a}
NEGATIVE_PREFIXES = ("un", "dis", "in", "im", "ir", "il", "non")
