"""Which browser origins may use which Wire tickets (first-party origins for
first-party tickets, card origins for card tickets). Pure.

A ticket's kind is the credential that minted it: `key` (an API key, `POST /v1/wire/tickets`:
a developer's own pages), `session` (the first-party site's signed-in session) or `card` (a card
tool embedded in other pages). Each kind has its own list of origins. A request that carries no
`Origin` is not from a browser (a server, a script) and is not limited by origin; a browser's
`Origin` must be on the list of its ticket's kind, and an empty list allows no browser at all.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("key", "session", "card")


def normalised(origin: str) -> str:
    """An origin as compared: scheme, host and port, lower case, no trailing slash."""
    return origin.strip().rstrip("/").lower()


def parse(text: str) -> frozenset[str]:
    """`https://a.example, https://b.example:8443` -> the set of origins."""
    return frozenset(normalised(part) for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class Origins:
    by_kind: dict[str, frozenset[str]]

    @classmethod
    def of(cls, key: str, session: str, card: str) -> "Origins":
        return cls({"key": parse(key), "session": parse(session), "card": parse(card)})

    def with_own(self, own: frozenset[str]) -> "Origins":
        """These origins, the API's own added for `session` tickets: the first-party page is served
        by the API itself (`/`), so a browser showing it sends the API's own origin."""
        return Origins({**self.by_kind, "session": self.by_kind.get("session", frozenset()) | own})

    def allows(self, kind: str, origin: str | None) -> bool:
        """Whether a ticket of this kind may be used from this `Origin` (None: not a browser)."""
        return origin is None or normalised(origin) in self.by_kind.get(kind, frozenset())

    def any_allows(self, origin: str | None) -> bool:
        """Whether some kind of ticket may be used from this `Origin`: before the ticket is known
        (a socket's upgrade), the one check there is."""
        return origin is None or any(normalised(origin) in allowed for allowed in self.by_kind.values())

    def all(self) -> frozenset[str]:
        return frozenset().union(*self.by_kind.values())
