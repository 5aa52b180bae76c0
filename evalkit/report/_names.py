"""Reader names for the raw ids a report would otherwise show: columns, dimensions, locales.

A table header is the column's reader name when one is known (``ci_low`` → ``95% CI
low``, ``erde`` → ``ERDE``), a dimension's name for a dimension id, a locale's name for a
locale code (``de`` → ``German (de)``), and otherwise the id with spaces, capitalised.
"""

from __future__ import annotations

import re

#: Readable names of the shipped dimensions.
DIMENSION_NAMES = {
    "self_harm": "Self-harm",
    "escalation": "Medical escalation",
    "faithfulness": "Faithfulness to sources",
}

#: Reader names of the raw column ids evalkit's frames use.
COLUMN_NAMES = {
    "case_id": "Case",
    "dimension": "Dimension",
    "locale": "Locale",
    "stratum": "Stratum",
    "split": "Split",
    "label_set": "Label set",
    "labeler": "Labeler",
    "bin": "Bin",
    "event": "Event",
    "scope": "Scope",
    "status": "Status",
    "n": "Pairs",
    "n_cases": "Cases",
    "n_turns": "Turns",
    "n_events": "Events",
    "n_missing": "Pairs dropped",
    "n_false_alarms": "False alarms",
    "n_positive": "Cases with an onset",
    "n_negative": "Cases without an onset",
    "n_redisclosures": "Re-disclosures",
    "n_responded": "Responded to",
    "tp": "True positives",
    "fp": "False positives",
    "fn": "False negatives",
    "tn": "True negatives",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "o": "ERDE midpoint o (user turns)",
    "c_fp": "False-positive cost",
    "erde": "ERDE",
    "k_half": "Half-penalty point (user turns)",
    "p": "Latency penalty rate p",
    "speed": "Speed",
    "f_latency": "Latency-weighted F1",
    "share": "Share",
    "rate": "Rate",
    "kappa": "Cohen's kappa",
    "se": "Standard error",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "boot_low": "Bootstrap 95% low",
    "boot_high": "Bootstrap 95% high",
    "p_observed": "Observed agreement",
    "p_expected": "Chance agreement",
    "kappa_max": "Max. attainable kappa",
    "ac1": "Gwet's AC1",
    "bp": "PABAK (Brennan–Prediger)",
    "alpha": "Krippendorff's alpha",
    "latency": "Latency (replies)",
    "onset_turn": "Onset turn",
    "template_family": "Template family",
}

_LANGUAGES = {
    "ar": "Arabic",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ru": "Russian",
    "sv": "Swedish",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "zh": "Chinese",
}

_REGIONS = {
    "AR": "Argentina",
    "AT": "Austria",
    "AU": "Australia",
    "BE": "Belgium",
    "BR": "Brazil",
    "CA": "Canada",
    "CH": "Switzerland",
    "CN": "China",
    "DE": "Germany",
    "ES": "Spain",
    "FR": "France",
    "GB": "UK",
    "IE": "Ireland",
    "IN": "India",
    "IT": "Italy",
    "JP": "Japan",
    "MX": "Mexico",
    "NL": "Netherlands",
    "NZ": "New Zealand",
    "PT": "Portugal",
    "US": "US",
    "ZA": "South Africa",
}

_LOCALE = re.compile(r"([a-z]{2,3})(?:-([A-Z]{2}))?")


def dimension_name(dimension: str) -> str:
    """A readable name for a dimension id (``self_harm`` → ``Self-harm``)."""
    return DIMENSION_NAMES.get(dimension, dimension.replace("_", " ").capitalize())


def is_locale(text: str) -> bool:
    """Whether ``text`` is a locale code evalkit can name (``de``, ``en-GB``)."""
    match = _LOCALE.fullmatch(text)
    return bool(match) and match.group(1) in _LANGUAGES  # type: ignore[union-attr]


def locale_name(code: object) -> str:
    """A locale code with its name: ``de`` → ``German (de)``, ``en-GB`` → ``English, UK
    (en-GB)``. A code evalkit cannot name (an unknown language or region) is returned as
    it is, so nothing is ever guessed."""
    text = str(code)
    match = _LOCALE.fullmatch(text)
    if not match or match.group(1) not in _LANGUAGES:
        return text
    language, region = _LANGUAGES[match.group(1)], match.group(2)
    if region is None:
        return f"{language} ({text})"
    if region not in _REGIONS:
        return text
    return f"{language}, {_REGIONS[region]} ({text})"


def header_name(column: object) -> str:
    """The header a reader sees for a raw column id (see the module docstring)."""
    text = str(column)
    if text in COLUMN_NAMES:
        return COLUMN_NAMES[text]
    if text in DIMENSION_NAMES:
        return DIMENSION_NAMES[text]
    if is_locale(text):
        return locale_name(text)
    return text.replace("_", " ").capitalize()


#: Column ids whose values are fractions or statistics: never shown as integers, even
#: when every value happens to be whole (a kappa of exactly 1 still reads ``1.000``).
_FRACTION = re.compile(
    r"(kappa|share|rate|ratio|prop|prob|p_|_p$|^p$|ci|boot|^se$|ac1|^bp$|alpha|precision|"
    r"recall|f1|latency_weighted|f_latency|erde|speed|c_fp|agreement|index|estimate|mean|"
    r"value|threshold|width|power|cost|usd)",
    re.IGNORECASE,
)


def is_fraction_column(column: object) -> bool:
    """Whether a column holds fractions or statistics by its id (see ``_FRACTION``)."""
    return bool(_FRACTION.search(str(column)))
