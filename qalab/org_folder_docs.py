"""The org-folder reference, docs/org-folder.md, generated from `OrgContext` and its specs
(field names, types, required or optional, defaults, limits, descriptions, accepted forms with
examples). `python -m qalab.org_folder` writes it; a test checks the checked-in file equals it."""

from __future__ import annotations

import re
import types
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from qalab.domain import KbDocumentSpec, OrgContext

DOCS_PATH = Path(__file__).resolve().parents[1] / "docs" / "org-folder.md"

_INTRO = """\
# Org folder reference

<!-- Generated from qalab/domain.py (OrgContext and its specs) by `python -m qalab.org_folder`.
Do not edit by hand: tests/qalab/test_org_folder_docs.py checks this file equals the generated
one. -->

An org folder holds `org.yaml` (the fields below) and `kb/*.md` (the knowledge base, one
Markdown document per file). `manage.py qalab_import_org DIR` validates all of it and imports
it in one transaction. A broken folder imports nothing and gets every problem at once (the
fields of `org.yaml`, the KB files, the limits), one line each, naming the file, the field as
the folder writes it and the value, with an example of what is expected:

```
invalid org folder, nothing imported: 4 problems
  org/org.yaml: currency: 'XYZ' is not a currency; write an ISO 4217 code or a symbol, e.g. 'EUR', 'GBP' or '£'
  org/org.yaml: hours[1].closes: '25:00' is not a time; write e.g. '17:30' or '5:30pm'
  org/org.yaml: services[2].duration: 1.5 — not whole minutes: write minutes, e.g. '90' or '1h30'
  org/org.yaml: name: missing (required); write e.g. 'Harbour Lane Dental'
```

Values are checked against what the tables hold (a 300-character name, a price of 10^9, a
2,000-hour service are errors naming the field). An organization whose slug exists is updated
only with `--replace`. Symbolic links (`org.yaml`, `kb/`, a `kb/*.md`) are refused, so a folder
can never import a file from elsewhere on the machine. `qalab/demo_org/` is a complete example;
`tests/data/orgs/` holds folders written in many styles and languages.

Limits, each refused with one line naming the file and the field or limit: any one file at most
`QALAB_ORG_MAX_FILE_BYTES` (2 MiB), all `kb/*.md` together at most `QALAB_ORG_MAX_KB_BYTES`
(10 MiB), sizes checked before anything is read; `org.yaml` nested at most 50 levels deep,
aliases adding at most 10,000 values once expanded (no recursive alias), no key twice in one
mapping; KB file names, intake field keys and policy ids unique without regard to case
(`kb/Prices.md` beside `kb/prices.md` is an error). Aliases expanding past the limit (a "billion
laughs") or used inside themselves are refused like any other limit: a hostile folder gets one
line too, never a traceback. The command exits 2 on an invalid folder.

## At a glance

```yaml
slug: demo                       # required
name: Harbour Lane Dental        # required
locale: en_IE
currency: EUR
offering: "What the business does"   # required
contact: {phone: "+353 1 555 0142", email: hello@example.ie, address: "...", website: "..."}
hours: "Mon-Thu 8:30am-6pm, Fri 8:30-4, closed Sundays"   # or [{days: Mon-Thu, opens: "08:30", closes: "18:00"}]
services: [{name: Hygiene clean, price: 80, duration: 45, description: "..."}]   # >= 1; or price: "from €80", duration: 1h 30
intake_fields: [{key: phone, label: Phone number, required: true, kind: phone}]  # kind: name|phone|email|date|time|text|choice
policies: [{id: cancellation, text: "...", critical: true}]
skills: [{name: booking, instructions: "..."}]
responder: reference             # optional default responder spec
responder_http: {request: ..., response: ...}  # optional: the JSON shape of an http(s) responder (docs/responders.md)
```

## Prices and durations as businesses write them

`services[].price` and `services[].duration` take a number or the organization's own words.
The import reads them with the lab's one reader of money and time spans (`qalab.values`, which
the generator and the judge read with too) and keeps the words: fixtures say prices and
durations the way the organization does ("£52", "from €80"), and the judge reads "£52" in a
reply and "52 GBP" in the knowledge base as the same price.

**Prices.** An amount with any currency symbol or ISO code before or after it, thousands grouped
with a comma, point or space, decimals with a point or a comma, the Swiss `.-`:
`£52`, `52 GBP`, `EUR 45`, `45 €`, `45,50 €`, `€1,234.50`, `1.234,50 €`, `CHF 120.-`, `$9.99`,
`¥3000`, `695 kr`, `52.00`. How the import stores one, and how the manifest (the judge's ground
truth) gives it:

| written | `price` | `price_kind` | `price_max` |
|---|---|---|---|
| `£52`, `52`, `52.00` | 52 | exact | - |
| `from €80`, `ab 80 €`, `à partir de 35 €`, `desde 25 €`, `starting at $89`, `€80+` | the lowest price | from | - |
| `80–120 €`, `£40 - £60`, `25 to 35 GBP` | 80 (the lowest) | range | 120 |
| `free`, `gratis`, `kostenlos`, `gratuit`, `no charge`, `0` | 0 | exact | - |

The judge accepts a reply's amount within a range, and at or above a "from" price. A price
that names a currency must name the organization's: "£52" with `currency: EUR` is an error. When
`currency` is absent it is the currency the prices name ("£52" makes it GBP; "$" and "kr" are
told apart by the locale: `en_CA` makes "$" CAD, `sv_SE` makes "kr" SEK), else EUR.

**Durations.** Minutes as a number, or a span of time in words: `45 min`, `45 minutes`, `1h 30`,
`1h30`, `1 hr 30 mins`, `90 minutes`, `1.5 hours`, `2 heures`, `90 Minuten`, `1 Std. 30 Min.`,
`about an hour`, `an hour and a half`, `half an hour`, `2 hours`, `3 days`; a range (`20-30 min`)
is read as its shortest, with `duration_max` the longest. Words that are no span of time (`2
visits`, `half day`, `day surgery`, `varies`, `depends on the job`), or a span longer than ten
weeks, are kept as they are without minutes: the judge then checks no minutes against them.

**Errors.** Only a malformed value is refused: an empty price or duration, a negative one, a
price with no amount (`abc`, `TBC`, `POA`), one price in two currencies, a duration number that
is not whole minutes (write `1.5 hours`, not `1.5`).

Fields marked *set by the import* are filled in from `price` and `duration`; an org folder
leaves them out.

## Opening hours as businesses write them

`hours` takes text, a mapping of days to times, or a list of lines (text or `{days, opens,
closes}`); the import reads them (`qalab.values.hours`, on the clock reader the judge reads
replies with) into lines with 24-hour times, which the manifest and the fixtures state:

```yaml
hours: "Mon-Fri 9am-5:30pm, Sat 10-2, closed Sundays"
hours: {Mon-Fri: 9-5, Sat: "10:00-14:00", Sun: closed}
hours: ["Mon-Fri 9-5", {days: Sat, opens: 10am, closes: 2pm}]
```

A time range with days before it, after it or none (`9am–5:30pm`, `9-5`, `09:00-17:30`, `Mon–Fri
9 to 5`, `9-5 Mon-Fri`, `Sat noon-midnight`); several separated by commas, semicolons or lines;
a range without days after one with days is more hours of those days (`Mon-Fri 9-12, 14-18`),
a first range without days covers every day. Closed days (`closed Sundays`, `Sunday: closed`,
`Sat & Sun closed`) are taken out of the lines written as text (`9-5, closed Sundays` is Mon-Sat
09:00-17:00). Times: `17:30`, `17.30`, `17h30`, `1730`, `5:30pm`, `5.30 p.m.`, `5 PM`, `noon`,
`midnight` (00:00), a bare hour `9`; day names in English (`Mon`, `Monday`, `Mondays`,
`weekdays`, `weekends`, `daily`); a hyphen, an en dash or `to` between two times or two days.
Lines read from text name their days canonically (`Mon-Fri`, `Sat, Sun`, `Mon-Sun`).

**Which half of the day.** A time without am/pm is read on the 24-hour clock, except that a
closing time that would not be after the opening time is read as pm when that puts it after
(`9-5` is 09:00-17:00, `10-2` is 10:00-14:00, `12-6` is 12:00-18:00), and an opening time
without am/pm before a pm closing time is pm too when it still opens before the close (`7-11pm`
is 19:00-23:00, `9-5pm` is 09:00-17:00). A time with a two-digit hour and minutes (`10:00`,
`17:30`) is always 24-hour. A closing time before the opening time after that is past midnight
(`6pm-2am`, `22:00-02:00`). Write am/pm or 24-hour times to mean otherwise.

YAML reads numbers as YAML 1.2 does, so `closes: 17:30` and `opens: 0730` are the times they
look like, not the numbers 1050 and 472 (YAML 1.1's base 60 and octal).
"""


def _type(annotation: Any) -> str:
    """A field type in words: 'text', 'list of services (below)', 'one of: a, b'."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:  # a constrained value: "text of at most 200 characters"
        most = [m.max_length for m in args[1:] if getattr(m, "max_length", None)]
        return _type(args[0]) + (f" of at most {most[0]} characters" if most else "")
    if origin in (Union, types.UnionType):
        named = [_type(a) for a in args if a is not type(None)]
        return " or ".join(named) + (" (or empty)" if type(None) in args else "")
    if origin is Literal:
        return "one of: " + ", ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type(args[0])}"
    if origin is dict:
        return f"mapping of {_type(args[0])} to {_type(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{_title(annotation)}](#{_anchor(annotation)})"
    names = {str: "text", int: "whole number", bool: "true/false", Decimal: "number or text"}
    return names.get(annotation, "any YAML value") if annotation is not Any else "any YAML value"


def _title(model: type[BaseModel]) -> str:
    return model.__name__


def _anchor(model: type[BaseModel]) -> str:
    return model.__name__.lower()


_LIMITS = {
    "min_length": "at least {} long",
    "max_length": "at most {} characters",
    "ge": "≥ {}",
    "gt": "> {}",
    "le": "≤ {}",
    "lt": "< {}",
    "pattern": "matches `{}`",
}


def _limits(field: FieldInfo) -> list[str]:
    found = []
    for item in field.metadata:
        for attr, words in _LIMITS.items():
            value = getattr(item, attr, None)
            if value is not None:
                if attr == "min_length":
                    words = "at least {} item(s)" if _is_list(field) else "at least {} character"
                elif attr == "max_length" and _is_list(field):
                    words = "at most {} item(s)"
                found.append(words.format(value))
    return found


def _is_list(field: FieldInfo) -> bool:
    annotation = field.annotation
    return get_origin(annotation) is list


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
        return "empty" if value in ([], {}) else "all defaults"
    if field.default is PydanticUndefined or field.default is None:
        return "empty" if field.default is None else ""
    if isinstance(field.default, bool):
        return f"`{str(field.default).lower()}`"
    return f"`{field.default}`" if field.default != "" else "empty"


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().replace("|", "\\|")


def _extra(field: FieldInfo, key: str) -> Any:
    extra = field.json_schema_extra
    return extra.get(key) if isinstance(extra, dict) else None


def _models(root: type[BaseModel]) -> dict[type[BaseModel], str]:
    """`root` and every model its fields use, in the order they first appear, each with where
    it is written in org.yaml (`services[]`, `responder_http.history`)."""
    order: dict[type[BaseModel], str] = {}

    def visit(model: type[BaseModel], where: str) -> None:
        if model in order:
            return
        order[model] = where
        for name, field in model.model_fields.items():
            many = "[]" if get_origin(field.annotation) is list else ""
            for inner in _inner_models(field.annotation):
                visit(inner, f"{where}.{name}{many}".lstrip("."))

    visit(root, "")
    return order


def _inner_models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _inner_models(arg)]


def _section(model: type[BaseModel], where: str) -> list[str]:
    lines = [f"## {_title(model)}", ""]
    if model.__doc__:
        lines += [_cell(model.__doc__), ""]
    lines += [f"Written as: {where}.", ""]
    lines += ["| field | type | required | default | limits | description |"]
    lines += ["|---|---|---|---|---|---|"]
    derived, examples = [], []
    for name, field in model.model_fields.items():
        description = _cell(field.description or "")
        if _extra(field, "derived"):
            description = f"*Set by the import.* {description}"
            derived.append(name)
        row = [
            f"`{name}`",
            _extra(field, "accepts") or _type(field.annotation),
            "yes" if field.is_required() else "no",
            _default(field),
            ", ".join(_limits(field)),
            description,
        ]
        lines.append("| " + " | ".join(_cell(c) if i else c for i, c in enumerate(row)) + " |")
        if _extra(field, "examples"):
            examples.append((name, _extra(field, "examples")))
    for name, values in examples:
        forms = ", ".join(f"`{v}`" for v in values)
        lines += ["", f"Accepted forms of `{name}`, for example: {forms}."]
    return [*lines, ""]


def reference_text() -> str:
    """The whole of docs/org-folder.md."""
    lines = [_INTRO]
    for model, where in _models(OrgContext).items():
        if model is OrgContext:
            lines += _section(model, "the top level of `org.yaml`")
        elif model is not KbDocumentSpec:
            lines += _section(model, f"`{where}` in `org.yaml`")
    lines += _section(KbDocumentSpec, "one `kb/*.md` file each, never in `org.yaml`")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str]) -> None:
    path = Path(argv[0]) if argv else DOCS_PATH
    path.write_text(reference_text(), encoding="utf-8")
    print(f"wrote {path}")
