"""Key-less callers are counted per IPv4 address or IPv6 /64, under a keyed hash."""

from __future__ import annotations

from api.access.address import address_bucket, address_subject


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
