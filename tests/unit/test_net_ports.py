"""infra.net.free_port: free, distinct, and out of the kernel's ephemeral range (where another
process's outgoing connection could take the port before our server binds it)."""

from __future__ import annotations

import socket

from infra import net


def test_free_ports_are_bindable_distinct_and_below_the_ephemeral_range():
    low = net._ephemeral_low()
    ports = [net.free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    for port in ports:
        if low - net._PICK_FROM >= 1000:
            assert net._PICK_FROM <= port < low
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # nothing holds it


def test_a_port_someone_listens_on_is_never_handed_out():
    with socket.socket() as held:
        held.bind(("127.0.0.1", net.free_port()))
        held.listen()
        taken = held.getsockname()[1]
        assert not net._bindable("127.0.0.1", taken)
        assert taken not in {net.free_port() for _ in range(50)}


def test_a_promised_port_is_avoided():
    """Promised to another process (as svc up promises the API its port): never handed out,
    even when nearly every port of the range is promised."""
    low = max(net._ephemeral_low(), net._PICK_FROM + 1000)
    promised = set(range(net._PICK_FROM, low - 5))
    assert not promised & {net.free_port(avoid=promised) for _ in range(20)}
