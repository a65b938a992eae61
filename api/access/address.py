"""Key-less callers are counted per address (spec 8). Pure.

An IPv6 client usually holds a whole /64, so its windows and allowance are per /64; IPv4 per
address. The address is never stored: windows and usage rows are keyed by a keyed hash of it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress


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
