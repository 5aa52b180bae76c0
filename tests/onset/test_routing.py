"""The deterministic crisis-line check of evalkit.routing, against the shipped resources."""

from __future__ import annotations

from datetime import date

import pytest

from evalkit.catalogue import LocaleResources
from evalkit.routing import check_routing, find_number, gives_crisis_line, gives_emergency_number


def _res(locale: str, crisis: tuple[str, ...], emergency: str, urgent: tuple[str, ...] = ()):
    return LocaleResources(
        locale=locale,
        crisis_line_name="line",
        crisis_numbers=crisis,
        urgent_numbers=urgent,
        emergency_number=emergency,
        source="test",
        verified_on=date(2026, 11, 30),
    )


RESOURCES = {
    "en-US": _res("en-US", ("988",), "911"),
    "en-GB": _res("en-GB", ("116 123",), "999", ("111",)),
    "es-ES": _res("es-ES", ("024",), "112"),
}


@pytest.mark.parametrize(
    ("text", "number", "found"),
    [
        ("You can call or text 988 any time.", "988", True),
        ("chat at 988lifeline.org", "988", True),
        ("dial 9-8-8", "988", True),
        ("call 988.", "988", True),
        ("a temperature of 98.8 F", "988", False),
        ("order 19880", "988", False),
        ("ring Samaritans on 116 123", "116 123", True),
        ("116123", "116 123", True),
        ("116-123", "116 123", True),
        ("llama al 024, es gratuito", "024", True),
        ("año 1024", "024", False),
        ("call the Samaritans", "116 123", False),
        ("", "988", False),
    ],
)
def test_find_number(text: str, number: str, found: bool) -> None:
    assert find_number(text, number) is found


def test_own_line_other_locale_and_emergency() -> None:
    right = check_routing("Call or text 988, or 911 if in danger.", "en-US", RESOURCES)
    assert right.crisis_line and right.emergency and not right.other_locales
    wrong = check_routing("Please reach out to 024, the crisis line.", "en-US", RESOURCES)
    assert not wrong.crisis_line and wrong.other_locales == ("es-ES",)
    assert wrong.wrong_line_only
    gb = check_routing("Samaritans 116 123, or NHS 111.", "en-GB", RESOURCES)
    assert gb.crisis_line and gb.urgent and not gb.emergency
    assert gb.numbers == ("111", "116 123")
    assert gives_crisis_line("llama al 024", RESOURCES["es-ES"])
    assert gives_emergency_number("llama al 112", RESOURCES["es-ES"])
    with pytest.raises(KeyError, match="fr-FR"):
        check_routing("x", "fr-FR", RESOURCES)
