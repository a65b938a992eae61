"""Key-less callers are counted per IPv4 address or IPv6 /64, under a keyed hash."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from access.address import (
    address_bucket, address_subject, client_address, forwarded_hops, forwarding_chain, trusted_networks,
)


def test_buckets():
    assert address_bucket("203.0.113.9") == "203.0.113.9"
    assert address_bucket("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert address_bucket("2001:db8:1:2:ffff::9") == address_bucket("2001:db8:1:2::1")
    assert address_bucket("2001:db8:1:3::1") != address_bucket("2001:db8:1:2::1")
    assert address_bucket("::ffff:203.0.113.9") == "203.0.113.9"
    assert address_bucket("testclient") == "testclient"
    assert address_bucket(None) == "unknown"


def test_subject_hides_the_address_and_depends_on_the_secret():
    a = address_subject(b"s1", "203.0.113.9")
    assert a.startswith("addr:") and "203.0.113.9" not in a and len(a) == 5 + 32
    assert a == address_subject(b"s1", "203.0.113.9")
    assert a != address_subject(b"s2", "203.0.113.9")
    assert a != address_subject(b"s1", "203.0.113.10")


PROXIES = trusted_networks("10.0.0.0/8, 2001:db8:ffff::/48, 127.0.0.1")


def test_forwarded_for_is_read_only_from_a_trusted_peer():
    # a trusted peer: the nearest untrusted hop, read from the right
    assert client_address("10.1.2.3", "203.0.113.9", PROXIES) == "203.0.113.9"
    assert client_address("10.1.2.3", "198.51.100.1, 203.0.113.9, 10.0.0.5", PROXIES) == "203.0.113.9"
    assert client_address("127.0.0.1", "203.0.113.9:51234", PROXIES) == "203.0.113.9"
    assert client_address("10.1.2.3", "[2001:db8:1::7]:443", PROXIES) == "2001:db8:1::7"
    assert client_address("::ffff:10.1.2.3", "::ffff:203.0.113.9", PROXIES) == "203.0.113.9"
    # an untrusted peer, no header, or no proxies configured: the peer
    assert client_address("203.0.113.50", "198.51.100.1", PROXIES) == "203.0.113.50"
    assert client_address("10.1.2.3", None, PROXIES) == "10.1.2.3"
    assert client_address("10.1.2.3", "198.51.100.1", ()) == "10.1.2.3"
    assert client_address("testclient", "198.51.100.1", PROXIES) == "testclient"
    # every hop trusted: the farthest; a malformed hop stops the walk at the last trusted one
    assert client_address("10.1.2.3", "10.9.9.9, 10.0.0.5", PROXIES) == "10.9.9.9"
    assert client_address("10.1.2.3", "203.0.113.9, unknown", PROXIES) == "10.1.2.3"


def test_trusted_networks_rejects_what_is_not_an_address():
    assert trusted_networks("") == ()
    assert trusted_networks(" 10.0.0.0/8 ,") == (ipaddress.ip_network("10.0.0.0/8"),)
    with pytest.raises(ValueError):
        trusted_networks("10.0.0.0/8, proxy.internal")


_public_v4 = st.integers(0xCB007100, 0xCB0071FF).map(lambda n: str(ipaddress.IPv4Address(n)))  # 203.0.113.0/24
_proxy_v4 = st.integers(0x0A000000, 0x0AFFFFFF).map(lambda n: str(ipaddress.IPv4Address(n)))  # 10.0.0.0/8


@given(spoofed=st.lists(_public_v4, max_size=3), client=_public_v4, chain=st.lists(_proxy_v4, max_size=4),
       peer=_proxy_v4)
def test_a_client_cannot_choose_its_address_by_sending_the_header(spoofed, client, chain, peer):
    """Whatever the client wrote into X-Forwarded-For itself stays left of what the trusted
    proxies appended, so the answer is the address the first proxy saw."""
    header = ", ".join([*spoofed, client, *chain])
    assert client_address(peer, header, PROXIES) == client


def test_rfc_7239_forwarded_reads_as_its_for_nodes():
    assert forwarded_hops("for=192.0.2.60;proto=http;by=203.0.113.43") == "192.0.2.60"
    assert forwarded_hops('For="[2001:db8:cafe::17]:4711"') == "[2001:db8:cafe::17]:4711"
    assert forwarded_hops("for=192.0.2.43, for=198.51.100.17") == "192.0.2.43, 198.51.100.17"
    # unknown or obfuscated nodes, and elements without `for`, stop the walk
    assert forwarded_hops("for=unknown, for=_hidden, proto=https") == "unknown, _hidden, unknown"
    # quoted strings may hold the separators; escapes are undone
    assert forwarded_hops('for="_a,b;c", for="198.51.100.\\1"') == "_a,b;c, 198.51.100.1"
    # through client_address: the nearest untrusted hop from the right, as with X-Forwarded-For
    assert client_address("10.1.2.3", forwarded_hops('for=198.51.100.1, for="203.0.113.9:443";proto=https, '
                                                     "for=10.0.0.5"), PROXIES) == "203.0.113.9"
    assert client_address("10.1.2.3", forwarded_hops("for=_hidden, for=10.0.0.5"), PROXIES) == "10.0.0.5"


def test_forwarded_wins_over_x_forwarded_for():
    def scope(*headers):
        return {"headers": [(k.encode(), v.encode()) for k, v in headers]}

    assert forwarding_chain(scope(("x-forwarded-for", "198.51.100.1"))) == "198.51.100.1"
    assert forwarding_chain(scope(("x-forwarded-for", "198.51.100.1"), ("forwarded", "for=203.0.113.9"))) \
        == "203.0.113.9"
    assert forwarding_chain(scope(("forwarded", "for=203.0.113.9"), ("forwarded", "for=10.0.0.5"))) \
        == "203.0.113.9, 10.0.0.5"  # repeated headers are one list (RFC 9110 5.3)
    assert forwarding_chain(scope()) is None
