"""Key-less callers are counted per address. Pure.

An IPv6 client usually holds a whole /64, so its windows and allowance are per /64; IPv4 per
address. The address is never stored: windows and usage rows are keyed by a keyed hash of it.

Behind a reverse proxy every peer is the proxy. The forwarding headers (RFC 7239 `Forwarded`
when sent, else `X-Forwarded-For`) are believed only when the peer is a configured trusted proxy
(`SVC_TRUSTED_PROXIES`), and then read from the right: the client is the nearest hop that is not
itself trusted (what each trusted proxy appended), so a client cannot pick its own address by
sending a header itself.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(spec: str) -> tuple[Network, ...]:
    """Comma-separated addresses or CIDR blocks, e.g. `10.0.0.0/8, 127.0.0.1`; ValueError on a bad one."""
    return tuple(ipaddress.ip_network(part.strip(), strict=False) for part in spec.split(",") if part.strip())


def _ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    value = value.strip()
    if value.startswith("[") and "]" in value:  # [v6]:port
        value = value[1:value.index("]")]
    elif value.count(":") == 1:  # v4:port
        value = value.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _trusted(ip, networks: tuple[Network, ...]) -> bool:
    return any(ip.version == n.version and ip in n for n in networks)


def client_address(peer: str | None, forwarded_for: str | None, networks: tuple[Network, ...]) -> str | None:
    """The caller's address: the peer, unless the peer is a trusted proxy and says whom it
    forwards for. A malformed hop ends the walk at the last trusted address before it."""
    if not networks or not forwarded_for or peer is None:
        return peer
    peer_ip = _ip(peer)
    if peer_ip is None or not _trusted(peer_ip, networks):
        return peer
    client = str(peer_ip)
    for hop in reversed(forwarded_for.split(",")):
        ip = _ip(hop)
        if ip is None:
            break
        client = str(ip)
        if not _trusted(ip, networks):
            break
    return client


def address_bucket(host: str | None) -> str:
    """The unit key-less limits count: an IPv4 address, an IPv6 /64, or the raw peer name."""
    if not host:
        return "unknown"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host  # e.g. a unix socket peer or a test client name
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def address_subject(secret: bytes, host: str | None) -> str:
    digest = hmac.new(secret, b"addr\x1f" + address_bucket(host).encode(), hashlib.sha256).hexdigest()
    return f"addr:{digest[:32]}"


def _split_unquoted(text: str, sep: str) -> list[str]:
    """`text` split at `sep` outside quoted strings (RFC 9110 quoted-string, backslash escapes)."""
    parts, current, quoted, escaped = [], [], False, False
    for ch in text:
        if escaped:
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


def forwarded_hops(forwarded: str) -> str:
    """RFC 7239 `Forwarded` as the hop list `X-Forwarded-For` would carry: each element's `for`
    node (quotes and escapes removed, so `"[2001:db8::17]:4711"` reads as in X-Forwarded-For).
    An element without one, or with an `unknown` or obfuscated node (`_hidden`), becomes
    `unknown`: not an address, so the walk from the right stops there."""
    hops = []
    for element in _split_unquoted(forwarded, ","):
        node = "unknown"
        for pair in _split_unquoted(element, ";"):
            name, sep, value = pair.partition("=")
            if sep and name.strip().lower() == "for":
                value = value.strip()
                if len(value) >= 2 and value[0] == value[-1] == '"':
                    value = re.sub(r"\\(.)", r"\1", value[1:-1])
                node = value or "unknown"
        hops.append(node)
    return ", ".join(hops)


def forwarding_chain(scope) -> str | None:
    """The hops a proxy says the request came through: `Forwarded` (the standard) when sent, else
    `X-Forwarded-For`. Believed only from a trusted peer (`client_address`)."""
    forwarded = header_value(scope, b"forwarded")
    if forwarded is not None:
        return forwarded_hops(forwarded)
    return header_value(scope, b"x-forwarded-for")


def header_value(scope, name: bytes) -> str | None:
    """The header's value; repeated headers joined with commas (RFC 9110 5.3)."""
    values = [value.decode("latin-1") for key, value in scope.get("headers", []) if key.lower() == name]
    return ", ".join(values) if values else None
