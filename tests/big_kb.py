"""A big, realistic org folder for speed and size tests: the demo org.yaml plus a generated KB.

The KB is written from a seeded RNG (nothing large is checked in): many Markdown and text
documents of varied prose, price lists with "€45", "£52" and "45 EUR", phone numbers, opening
hours, dates, FAQ entries, staff notes, and a few long manuals, so size and shape look like a
real customer's knowledge base.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import yaml

from qalab.org_folder import DEMO_ORG_DIR

_TOPICS = [
    "check-ups",
    "hygiene",
    "fillings",
    "whitening",
    "emergencies",
    "children",
    "payments",
    "insurance",
    "parking",
    "accessibility",
    "referrals",
    "orthodontics",
    "implants",
    "crowns",
    "dentures",
    "sedation",
    "x-rays",
    "gum care",
    "mouthguards",
    "aftercare",
]
_SUBJECTS = [
    "Reception",
    "The hygienist",
    "Our dentists",
    "The practice manager",
    "The nurse on duty",
    "Dr. Brennan",
    "Dr. Nowak",
    "The front desk team",
]
_VERBS = [
    "confirms",
    "explains",
    "checks",
    "reminds patients about",
    "can arrange",
    "will quote",
    "keeps a note of",
    "answers questions about",
]
_OBJECTS = [
    "the treatment plan",
    "the deposit",
    "the follow-up visit",
    "the waiting list",
    "any change to the booking",
    "the aftercare leaflet",
    "the receipt for the insurer",
    "the consent form",
]
_CLAUSES = [
    "before the appointment starts",
    "within one working day",
    "if the patient asks",
    "when the diary is busy",
    "after every visit",
    "unless the dentist says otherwise",
    "on the same day",
    "by phone or by email",
]
_FILLER = [
    "Most patients find this straightforward.",
    "Please bring a list of any medicines you take.",
    "Arrive ten minutes early so the paperwork does not eat into your time.",
    "If anything is unclear, ask at the desk; we would rather explain twice.",
    "We review this page every quarter, so details may change.",
    "Parents are welcome to stay in the room with younger children.",
    "The waiting room has a ramp, a lift and an accessible toilet.",
    "Card, cash and contactless are all fine.",
]
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _price(rng: random.Random) -> str:
    amount = rng.randrange(15, 900)
    cents = rng.choice(["", "", "", f".{rng.randrange(10, 100)}"])
    form = rng.randrange(4)
    if form == 0:
        return f"€{amount}{cents}"
    if form == 1:
        return f"£{amount}{cents}"
    if form == 2:
        return f"{amount} EUR"
    return f"EUR {amount}{cents}"


def _phone(rng: random.Random) -> str:
    return rng.choice(
        [
            f"+353 1 555 {rng.randrange(1000, 10000)}",
            f"020 7946 {rng.randrange(1000, 10000)}",
            f"(01) 555-{rng.randrange(1000, 10000)}",
            f"+44 161 496 {rng.randrange(1000, 10000)}",
        ]
    )


def _time(rng: random.Random) -> str:
    hour, minute = rng.randrange(7, 20), rng.choice([0, 15, 30, 45])
    if rng.random() < 0.7:
        return f"{hour:02d}:{minute:02d}"
    suffix = "am" if hour < 12 else "pm"
    return f"{(hour - 1) % 12 + 1}{f'.{minute:02d}' if minute else ''}{suffix}"


def _date(rng: random.Random) -> str:
    day, month, year = rng.randrange(1, 29), rng.randrange(12), rng.choice([2023, 2024, 2025])
    if rng.random() < 0.5:
        return f"{day} {_MONTHS[month]} {year}"
    return f"{year}-{month + 1:02d}-{day:02d}"


def _sentence(rng: random.Random) -> str:
    kind = rng.randrange(7)
    if kind == 0:
        who, does = rng.choice(_SUBJECTS), rng.choice(_VERBS)
        return f"{who} {does} {rng.choice(_OBJECTS)} {rng.choice(_CLAUSES)}."
    if kind == 1:
        topic = rng.choice(_TOPICS)
        minutes = rng.randrange(10, 120)
        return f"A {topic} appointment costs {_price(rng)} and takes about {minutes} minutes."
    if kind == 2:
        return f"Call {_phone(rng)} between {_time(rng)} and {_time(rng)} on {rng.choice(_DAYS)}."
    if kind == 3:
        return f"From {_date(rng)} the fee for {rng.choice(_TOPICS)} changes to {_price(rng)}."
    if kind == 4:
        return f"On {rng.choice(_DAYS)}s we open at {_time(rng)} and close at {_time(rng)}."
    return rng.choice(_FILLER)


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randrange(3, 9)))


def _section(rng: random.Random) -> list[str]:
    topic = rng.choice(_TOPICS)
    kind = rng.randrange(5)
    lines = [f"## {topic.capitalize()} ({rng.choice(_MONTHS)} update)", ""]
    if kind == 0:
        lines += ["| Treatment | Price | Time |", "|---|---|---|"]
        lines += [
            f"| {rng.choice(_TOPICS).capitalize()} {rng.randrange(1, 9)} | {_price(rng)} "
            f"| {rng.randrange(10, 120)} min |"
            for _ in range(rng.randrange(4, 12))
        ]
    elif kind == 1:
        lines += [f"- {day}: {_time(rng)} to {_time(rng)}" for day in _DAYS[: rng.randrange(3, 8)]]
    elif kind == 2:
        for _ in range(rng.randrange(2, 6)):
            lines += [f"Q: How much is {rng.choice(_TOPICS)}?", f"A: {_paragraph(rng)}", ""]
    else:
        lines += [_paragraph(rng) for _ in range(rng.randrange(1, 4))]
    return [*lines, ""]


@dataclass(frozen=True)
class KbFile:
    name: str
    size: int  # bytes of UTF-8


def write_kb(kb_dir: Path, *, total_bytes: int, seed: int = 7) -> list[KbFile]:
    """Write documents into `kb_dir` until they hold `total_bytes` of UTF-8 (give or take one
    section). Mostly 2-40 KB pages, every 25th a long manual (150-400 KB). Returns what it wrote."""
    rng = random.Random(seed)
    kb_dir.mkdir(parents=True, exist_ok=True)
    written: list[KbFile] = []
    total = 0
    index = 0
    while total < total_bytes:
        index += 1
        topic = rng.choice(_TOPICS)
        long_doc = index % 25 == 0
        target = rng.randrange(150_000, 400_000) if long_doc else rng.randrange(2_000, 40_000)
        target = min(target, max(total_bytes - total, 500))
        title = f"{'Manual' if long_doc else 'Notes'}: {topic} ({index})"
        lines = [f"# {title}", "", _paragraph(rng), ""]
        size = sum(len(line.encode()) + 1 for line in lines)
        while size < target:
            section = _section(rng)
            lines += section
            size += sum(len(line.encode()) + 1 for line in section)
        text = "\n".join(lines) + "\n"
        name = f"{index:04d}-{topic.replace(' ', '-')}.md"
        (kb_dir / name).write_text(text, encoding="utf-8")
        data = text.encode("utf-8")
        written.append(KbFile(name=name, size=len(data)))
        total += len(data)
    return written


def write_big_org(
    folder: Path, *, total_bytes: int, slug: str = "big", seed: int = 7
) -> list[KbFile]:
    """An org folder at `folder`: the demo org.yaml under another slug, the demo KB, and a
    generated KB of about `total_bytes`. Returns every KB file it holds."""
    data = yaml.safe_load((DEMO_ORG_DIR / "org.yaml").read_text(encoding="utf-8"))
    data["slug"] = slug
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "org.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    kb_dir = folder / "kb"
    files = []
    for doc in sorted((DEMO_ORG_DIR / "kb").glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        (kb_dir / doc.name).parent.mkdir(parents=True, exist_ok=True)
        (kb_dir / doc.name).write_text(text, encoding="utf-8")
        files.append(KbFile(name=doc.name, size=len(text.encode("utf-8"))))
    return files + write_kb(kb_dir, total_bytes=total_bytes, seed=seed)
