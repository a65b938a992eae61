"""Which `Accept-Encoding` values take gzip (RFC 9110 12.5.3): the front door compresses only for them."""

from __future__ import annotations

import pytest

from api.front import accepts_gzip


@pytest.mark.parametrize("value,takes", [
    ("gzip", True), ("GZIP", True), ("gzip, deflate, br", True), ("br;q=1.0, gzip;q=0.8", True),
    ("x-gzip", True), (" gzip ; q=0.001", True),
    ("gzip;q=0", False), ("gzip;q=0.000", False), ("gzip; q=0, identity", False), ("identity", False),
    ("deflate, br", False), ("", False), ("gzip;q=nonsense", False), ("notgzip", False),
])
def test_gzip_is_taken_only_when_named_with_a_weight_above_zero(value, takes):
    assert accepts_gzip(value) is takes
