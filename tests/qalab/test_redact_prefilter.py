"""`redact` skips a credential shape when the text lacks the words any match of it must contain
(a KB of megabytes is redacted at import). Skipping must never change the result: the redaction
equals the plain one, every shape applied in turn, on texts built to hit the corner cases
(re's case-insensitive extras U+0130, U+0131, U+017F, U+212A; keywords split by a secret, shapes feeding each other)."""

from __future__ import annotations

import random

import pytest

from qalab.redact import _SHAPES, REDACTED, _redact_match, redact


def _plain(text: str, secrets: list[str]) -> str:
    if not text:
        return text
    for value in secrets:
        text = text.replace(value, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(_redact_match, text)
    return text


PIECES = [
    "Bearer", "bearer ", "BASIC ", "Basıc ", "baſic ", "bearer\t", "authorization", "AUTHORİZATION",
    "Proxy-Authorization", "x-api-key", "API_KEY", "apikey", "api-Key", "ACCESS_TOKEN",
    "accesstoken", "access-token", "client_secret", "ClientSecret", "client-secret", "PASSWORD",
    "paſſword", "pas", "sword", "sk-", "rk-", "pk-", "SK-", "proj-", "ſk-", ": ", "=", '"', "'",
    " ", "\n", "abcdefgh12345678", "AbCdEfGhIjKlMnOpQrSt", "0123456789abcdef", "zz9-plural",
    "[REDACTED]", "€45", "14:30", "appointment", "cleaning", ",", ";", "ab", "s3cretvalue",
]  # fmt: skip
SECRETS = ["s3cretvalue", "wordsecretvalue"]


@pytest.mark.parametrize("seed", range(3))
def test_it_redacts_exactly_as_the_plain_shapes(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(12)))
        secrets = SECRETS if rng.random() < 0.3 else []
        assert redact(text, secrets=secrets) == _plain(text, secrets), repr(text)


@pytest.mark.parametrize(
    "text",
    [
        "PASSWORD: hunter2hunter2",
        "paſſword=hunter2hunter2",  # re's IGNORECASE takes U+017F for s
        "AUTHORİZATION: tokentokentoken",  # and U+0130 for i
        "Authorization: Basic dXNlcjpwYXNz",
        "Bearer abc.DEF-123_456",
        "sk-proj-AbCdEfGhIjKlMnOpQrSt",
    ],
)
def test_credentials_in_unusual_case_are_still_redacted(text: str) -> None:
    out = redact(text, secrets=[])
    assert REDACTED in out and out == _plain(text, [])


def test_a_text_without_any_shape_word_is_returned_as_is() -> None:
    text = "A hygiene clean is €45 and takes 45 minutes; call +353 1 555 0142.\n" * 1000
    assert redact(text, secrets=[]) == text
