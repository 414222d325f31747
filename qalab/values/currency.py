"""An organization's currency: the `currency` field written as a code, a symbol or a word
("GBP", "gbp", "£", "pounds"), inferred from the prices when the field is absent, and checked
against every price that names a currency."""

from __future__ import annotations

import re

from qalab.values.money import currencies_of
from qalab.values.service_values import ValueFormError, read_price

# The currency of a country, for the markers several countries share ("$", "kr", "¥", "Rs").
COUNTRY_CURRENCY = {
    "US": "USD", "CA": "CAD", "AU": "AUD", "NZ": "NZD", "SG": "SGD", "HK": "HKD", "MX": "MXN",
    "TW": "TWD", "AR": "ARS", "CL": "CLP", "SE": "SEK", "NO": "NOK", "DK": "DKK", "IS": "ISK",
    "JP": "JPY", "CN": "CNY", "IN": "INR", "PK": "PKR", "LK": "LKR", "NP": "NPR",
}  # fmt: skip
_CODE = re.compile(r"^[A-Za-z]{3}$")
# ISO 4217: the codes a `currency` field may be written as.
_ISO_CODES = """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD
    BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD
    EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HRK HTG HUF IDR ILS INR IQD
    IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA
    MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP
    PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP
    SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST
    XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL"""
ISO_4217 = frozenset(_ISO_CODES.split())
_WRITE_A_CODE = "write an ISO 4217 code or a symbol, e.g. 'EUR', 'GBP' or '£'"


def _country(locale: str) -> str:
    return re.split(r"[_-]", locale)[-1].upper() if locale else ""


def choose(codes: tuple[str, ...], locale: str) -> str | None:
    """The one code of `codes` meant: the only one, the locale's, or the usual one; None when
    the marker is ambiguous and the locale does not say ('kr' without a Nordic locale)."""
    if len(codes) == 1:
        return codes[0]
    local = COUNTRY_CURRENCY.get(_country(locale))
    if local in codes:
        return local
    return None if "SEK" in codes else codes[0] if codes else None


def normalize_currency(value: str, locale: str) -> str:
    """'gbp' / '£' / 'pounds' -> 'GBP'; '$' -> 'USD' (or 'CAD' for en_CA); raise ValueError for
    a value that names no currency."""
    text = value.strip()
    if _CODE.match(text) and text.upper() in ISO_4217:
        return text.upper()
    codes = tuple(c for c in currencies_of(text) if c in ISO_4217) if text else ()
    if not codes:
        raise ValueError(f"{text[:40]!r} is not a currency; {_WRITE_A_CODE}")
    code = choose(codes, locale)
    if code is None:
        raise ValueError(f"{text!r} may be {', '.join(codes)}: write the ISO code")
    return code


def price_currencies(price_text: str) -> tuple[str, ...]:
    """The codes the currency of a price text may be; () when it names none (or is no price)."""
    if not price_text:
        return ()
    try:
        return read_price(price_text).currencies
    except ValueFormError:
        return ()


def infer_currency(price_texts: list[str], locale: str) -> tuple[str | None, int | None]:
    """The currency the first price naming one says (given the locale), and the index of that
    price; (None, None) when no price names one. (None, index) when its marker is ambiguous."""
    for index, text in enumerate(price_texts):
        codes = price_currencies(text)
        if codes:
            return choose(codes, locale), index
    return None, None
