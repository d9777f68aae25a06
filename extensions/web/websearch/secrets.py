"""Keys kept out of every answer: each text leaving the add-on (results, errors, notes,
progress) passes ``Secrets.mask`` first, which replaces every key it knows, as it is
and as a URL or a form would encode it."""

from __future__ import annotations

from urllib.parse import quote, quote_plus

HIDDEN = "[key hidden]"


class Secrets:
    def __init__(self) -> None:
        self._forms: list[str] = []

    def add(self, value: str | None) -> str | None:
        if value and len(value) >= 4:
            self._forms.extend({value, quote(value, safe=""), quote_plus(value)})
            self._forms.sort(key=len, reverse=True)
        return value

    def mask(self, text) -> str:
        text = "" if text is None else str(text)
        for form in self._forms:
            text = text.replace(form, HIDDEN)
        return text

    def clean(self, value):
        """``value`` (JSON-ready) with every string masked."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, list):
            return [self.clean(v) for v in value]
        if isinstance(value, dict):
            return {self.mask(k): self.clean(v) for k, v in value.items()}
        return value
