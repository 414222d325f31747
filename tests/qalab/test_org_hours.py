"""Opening hours as businesses write them (issue 35, point 5): an org folder's `hours` as text,
a mapping or a list, 12- and 24-hour clocks, closed days, read into the exact lines the
manifest and the fixtures use; a value that is no time is an error naming it with an example."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.domain import hours_by_weekday
from qalab.domain import OrgContext
from qalab.org_folder import DEMO_ORG_DIR, OrgFolderError, load_org_folder
from qalab.values.hours import HOURS_EXAMPLES, read_hours

MON_FRI, EVERY_DAY = "Mon-Fri", "Mon-Sun"


def _line(days: str, opens: str, closes: str) -> dict[str, str]:
    return {"days": days, "opens": opens, "closes": closes}


def _folder(tmp_path: Path, hours_yaml: str) -> Path:
    """The demo folder with `hours:` written as the given YAML text (not via a YAML dumper,
    so unquoted values are read as a newcomer's file is)."""
    folder = tmp_path / "org"
    shutil.copytree(DEMO_ORG_DIR, folder)
    text = (folder / "org.yaml").read_text(encoding="utf-8")
    start = text.index("hours:\n")
    end = text.index("services:\n")
    (folder / "org.yaml").write_text(text[:start] + hours_yaml + "\n" + text[end:], "utf-8")
    return folder


def _hours(tmp_path: Path, hours_yaml: str) -> list[dict[str, str]]:
    return [h.model_dump() for h in load_org_folder(_folder(tmp_path, hours_yaml)).hours]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("hours: 9am–5:30pm", [_line(EVERY_DAY, "09:00", "17:30")]),
        ("hours: 9-5", [_line(EVERY_DAY, "09:00", "17:00")]),
        ("hours: 09:00-17:30", [_line(EVERY_DAY, "09:00", "17:30")]),
        ("hours: Mon–Fri 9 to 5", [_line(MON_FRI, "09:00", "17:00")]),
        ("hours: Mon-Fri 9 to 5", [_line(MON_FRI, "09:00", "17:00")]),
        (
            "hours: Mon-Fri 9am-5pm, Sat 10-2",
            [_line(MON_FRI, "09:00", "17:00"), _line("Sat", "10:00", "14:00")],
        ),
        (
            "hours: Mon-Fri 9am-5pm, Sat 10-2, closed Sundays",
            [_line(MON_FRI, "09:00", "17:00"), _line("Sat", "10:00", "14:00")],
        ),
        ("hours: 9-5, closed Sundays", [_line("Mon-Sat", "09:00", "17:00")]),
        ("hours: 'daily 10-6; Sunday: closed'", [_line("Mon-Sat", "10:00", "18:00")]),
        ("hours: Mon-Sat 8:30-6, Sat and Sun closed", [_line(MON_FRI, "08:30", "18:00")]),
        ("hours: 'Mon-Fri 9:30 pm - 11:30 pm'", [_line(MON_FRI, "21:30", "23:30")]),
        ("hours: Fri 7-11pm", [_line("Fri", "19:00", "23:00")]),
        ("hours: Fri 9-5pm", [_line("Fri", "09:00", "17:00")]),
        ("hours: Sat noon-midnight", [_line("Sat", "12:00", "00:00")]),
        ("hours: Sat 12-6", [_line("Sat", "12:00", "18:00")]),
        ("hours: Fri 6pm-2am", [_line("Fri", "18:00", "02:00")]),
        ("hours: Mon-Fri 0900-1730", [_line(MON_FRI, "09:00", "17:30")]),
        ("hours: Mon-Fri 9h-18h30", [_line(MON_FRI, "09:00", "18:30")]),
        ("hours: Open Monday to Friday from 9 a.m. to 5 p.m.", [_line(MON_FRI, "09:00", "17:00")]),
        ("hours: 9-5 Mon-Fri", [_line(MON_FRI, "09:00", "17:00")]),
        ("hours: Tues-Thurs 10:30-19:00", [_line("Tue-Thu", "10:30", "19:00")]),
        ("hours: Mon, Wed 9-5", [_line("Mon, Wed", "09:00", "17:00")]),
        ("hours: weekends 10-4", [_line("Sat, Sun", "10:00", "16:00")]),
        (
            "hours: Mon-Fri 9-12, 14-18",
            [_line(MON_FRI, "09:00", "12:00"), _line(MON_FRI, "14:00", "18:00")],
        ),
        (
            "hours: |\n  Mon-Fri 9-5\n  Sat 10-2\n  Sunday: closed",
            [_line(MON_FRI, "09:00", "17:00"), _line("Sat", "10:00", "14:00")],
        ),
        (
            "hours: {Mon-Fri: 9-5, Sat: '10:00-14:00', Sun: closed}",
            [_line(MON_FRI, "09:00", "17:00"), _line("Sat", "10:00", "14:00")],
        ),
        (
            "hours:\n  - Mon-Fri 9-5\n  - {days: Sat, opens: 10am, closes: 2pm}",
            [_line(MON_FRI, "09:00", "17:00"), _line("Sat", "10:00", "14:00")],
        ),
        # YAML 1.1 would read these as the numbers 1050 and 472 (base 60, octal).
        ("hours:\n  - {days: Sat, opens: 0730, closes: 17:30}", [_line("Sat", "07:30", "17:30")]),
        ("hours:\n  - {days: Sat, opens: 9, closes: 5}", [_line("Sat", "09:00", "17:00")]),
        ("hours:\n  - {days: Sat, opens: 8.30, closes: noon}", [_line("Sat", "08:30", "12:00")]),
        ("hours: closed Sundays", []),
        ("hours:", []),
    ],
)
def test_it_reads_hours_as_businesses_write_them(
    tmp_path: Path, written: str, expected: list[dict[str, str]]
) -> None:
    assert _hours(tmp_path, written) == expected


@pytest.mark.parametrize(
    ("written", "says"),
    [
        (
            "hours:\n  - {days: Mon, opens: '09:00', closes: '17:00'}\n"
            "  - {days: Tue, opens: '09:00', closes: '25:00'}",
            "hours[1].closes: '25:00' is not a time; write e.g. '17:30' or '5:30pm'",
        ),
        (
            "hours: Mon-Fri 9 till late",
            "hours: 'Mon-Fri 9 till late' is not days and opening times; "
            "write e.g. 'Mon-Fri 9am-5:30pm, Sat 10-2, closed Sundays'",
        ),
        (
            "hours: Mon-Fri 9-25",
            "hours: '25' in 'Mon-Fri 9-25' is not a time; write e.g. '17:30' or '5:30pm'",
        ),
        ("hours: Mon-Fri", "hours: 'Mon-Fri' names days but no hours; write e.g. 'Mon-Fri 9-5'"),
        (
            "hours: Sun 10-2, closed Sundays",
            "hours: 'Sun 10-2' is closed on every day it names; "
            "write e.g. 'Mon-Fri 9am-5:30pm, Sat 10-2, closed Sundays'",
        ),
        (
            "hours: {Sat: [10, 2]}",
            "hours.Sat: a list — not opening times; write e.g. '9-5' or 'closed'",
        ),
    ],
)
def test_a_bad_hours_value_is_named_with_an_example(
    tmp_path: Path, written: str, says: str
) -> None:
    folder = _folder(tmp_path, written)
    with pytest.raises(OrgFolderError) as raised:
        load_org_folder(folder)
    assert str(raised.value) == f"{folder / 'org.yaml'}: {says}"


@pytest.mark.parametrize("written", HOURS_EXAMPLES)
def test_every_form_the_docs_show_is_accepted(written: str) -> None:
    reading = read_hours(written)
    assert not reading.problems and all(isinstance(line, dict) for line in reading.lines)


def test_hours_read_from_text_are_the_days_the_generator_reads(demo_org_context: Any) -> None:
    org = OrgContext.model_validate(
        {**demo_org_context, "hours": "Mon-Fri 9-5, Sat 10-2, closed Sundays"}
    )
    by_day = hours_by_weekday(org.hours)
    assert sorted(by_day) == [0, 1, 2, 3, 4, 5]
    assert (by_day[5].opens, by_day[5].closes) == ("10:00", "14:00")


def test_stored_hours_read_back_as_themselves() -> None:
    lines = [_line("Mon", "18:00", "10:00"), _line("Tue", "00:00", "00:00")]
    assert read_hours(lines).lines == lines
    data = yaml.safe_load((DEMO_ORG_DIR / "org.yaml").read_text(encoding="utf-8"))
    org = OrgContext.model_validate({**data, "hours": lines})
    assert [h.model_dump() for h in org.hours] == lines


@pytest.fixture
def demo_org_context() -> dict[str, Any]:
    return yaml.safe_load((DEMO_ORG_DIR / "org.yaml").read_text(encoding="utf-8"))
