"""The AsyncAPI 3.0 document of what live clients receive, built from the Structs in
`schemas.wire` (so the document cannot drift from the code that encodes them).

Channels: the `wire.deltas` Kafka topic of each dataset (what the projector publishes), the
single-topic server-sent events stream `GET /v1/stream/{topic}` (a snapshot, then those deltas),
and the socket `/v1/wire` (control messages of `wire.messages`, snapshots, deltas).
"""

from __future__ import annotations

from typing import Any

import msgspec

from schemas.wire import DATA_BY_TYPE, KIND_OF_TYPE, Envelope, SnapshotEnvelope, topic_pattern
from wire import messages as control

CLIENT_MESSAGES = (control.Auth, control.Resume, control.Subscribe, control.Unsubscribe, control.ListSubscriptions,
                   control.Pong)
SERVER_MESSAGES = (control.Hello, control.Ack, control.ErrorMessage, control.WarningMessage, control.Ping,
                   control.Drain, control.ResumeFailed, control.Feed)

TITLES = {"game.state": "Game state", "market.update": "Market update", "market.suspended": "Market suspended",
          "answer.update": "Answer re-derived (supersedes the previous version)"}
TOPIC_PATTERNS = {delta_type: topic_pattern(kind) for delta_type, kind in KIND_OF_TYPE.items()}


def _message_name(delta_type: str) -> str:
    return delta_type.replace(".", "_")


def document(version: str) -> dict[str, Any]:
    structs = [Envelope, SnapshotEnvelope, *dict.fromkeys(DATA_BY_TYPE.values()), *CLIENT_MESSAGES, *SERVER_MESSAGES]
    _, schemas = msgspec.json.schema_components(structs, ref_template="#/components/schemas/{name}")
    messages: dict[str, Any] = {}
    for delta_type, data in DATA_BY_TYPE.items():
        name = _message_name(delta_type)
        payload = {
            "allOf": [
                {"$ref": "#/components/schemas/Envelope"},
                {
                    "type": "object",
                    "properties": {
                        "op": {"const": "delta"},
                        "type": {"const": delta_type},
                        "topic": {"type": "string", "pattern": TOPIC_PATTERNS[delta_type]},
                        "data": {"$ref": f"#/components/schemas/{data.__name__}"},
                    },
                },
            ]
        }
        messages[name] = {
            "name": name,
            "title": TITLES[delta_type],
            "contentType": "application/json",
            "bindings": {"kafka": {"key": {"type": "string", "description": "the Wire topic"}}},
            "payload": {"schemaFormat": "application/schema+json;version=draft-07", "schema": payload},
        }
    channel_messages = {name: {"$ref": f"#/components/messages/{name}"} for name in messages}
    messages["snapshot"] = {
        "name": "snapshot",
        "title": "Snapshot",
        "summary": "SSE `event: snapshot`, `id` = seq: the topic's state at its last seq; `data` has the shape of the "
                   "topic's delta data with every line. First on every stream, and again after any gap.",
        "contentType": "application/json",
        "payload": {"schemaFormat": "application/schema+json;version=draft-07",
                    "schema": {"$ref": "#/components/schemas/SnapshotEnvelope"}},
    }
    stream_messages = {name: {"$ref": f"#/components/messages/{name}"} for name in messages}
    control_names = {}
    for struct in (*CLIENT_MESSAGES, *SERVER_MESSAGES):
        op = struct.__struct_config__.tag
        control_names[struct] = name = f"control_{op}"
        messages[name] = {
            "name": name,
            "title": f"`{op}` ({'client' if struct in CLIENT_MESSAGES else 'server'})",
            "contentType": "application/json",
            "payload": {"schemaFormat": "application/schema+json;version=draft-07",
                        "schema": {"$ref": f"#/components/schemas/{struct.__name__}"}},
        }
    # a stream sends `event: feed` with the same payload as the socket's `feed`
    stream_messages[control_names[control.Feed]] = {"$ref": f"#/components/messages/{control_names[control.Feed]}"}
    socket_messages = {
        **stream_messages, **{n: {"$ref": f"#/components/messages/{n}"} for n in control_names.values()},
    }
    channels = {
        "liveDeltas": {
            "address": "wire.deltas",
            "title": "Deltas of the live dataset",
            "description": "Keyed by Wire topic; per topic seq runs 1, 2, 3, ... Consumers drop seq <= last.",
            "messages": channel_messages,
        },
        "sandboxDeltas": {
            "address": "test.wire.deltas",
            "title": "Deltas of the test sandbox",
            "description": "Same messages, for the sandbox dataset (test keys and mode: test).",
            "messages": channel_messages,
        },
        "stream": {
            "address": "/v1/stream/{topic}",
            "servers": [{"$ref": "#/servers/api"}],
            "title": "One Wire topic as server-sent events",
            "description": (
                "Open with an `sse` wire ticket (POST /v1/wire/tickets) as `?ticket=`. Each event's `id` is the "
                "topic's seq and its `event` the message type; each data line is one envelope. `Last-Event-ID` "
                "(or the `last_event_id` query parameter; the header wins) within 120 s replays what was missed. "
                "The spent ticket reopens its stream (the same URL, as a browser's EventSource reconnects) "
                "within 120 s of a drop; later, mint a new one. Browsers from allowed origins get CORS headers. `: ping` comments every 20 s; `event: drain` "
                "(`{deadline_at}`) 30 s before the 24-hour end; `event: feed` when the topic's expected latency or "
                "liveness changed from what the snapshot said; `event: warning` (`slow_consumer`, a snapshot "
                "follows); `event: error` (`{code, detail}`) ends the stream."
            ),
            "parameters": {"topic": {"description": "`game:gm_…`, `market:mkt_…` or `answer:ans_…`"}},
            "messages": stream_messages,
        },
        "socket": {
            "address": "/v1/wire",
            "servers": [{"$ref": "#/servers/api"}],
            "title": "The Wire socket (WebSocket, subprotocol svc.v1)",
            "description": (
                "Authenticate within 5 s with `auth` (a `ws` ticket), or offer `svc.ticket.{ticket}` as a second "
                "subprotocol, or `resume` within 120 s. `subscribe`/`unsubscribe`/`list_subscriptions` are "
                "answered by `ack` (the full topic set); each new topic gets its snapshot, then its deltas by seq. "
                "Close codes (4000-4099 fatal, 4100-4199 back off, 4200-4299 reconnect now and resume): "
                + ", ".join(f"{code} {why}" for code, why in sorted(control.CLOSE_MEANINGS.items())) + "."
            ),
            "messages": socket_messages,
        },
    }
    operations = {
        f"receive{key[0].upper()}{key[1:]}": {
            "action": "receive",
            "channel": {"$ref": f"#/channels/{key}"},
            "messages": [{"$ref": f"#/channels/{key}/messages/{name}"} for name in channels[key]["messages"]
                         if not any(name == control_names[c] for c in CLIENT_MESSAGES)],
        }
        for key in channels
    }
    operations["sendSocket"] = {
        "action": "send",
        "channel": {"$ref": "#/channels/socket"},
        "messages": [{"$ref": f"#/channels/socket/messages/{control_names[c]}"} for c in CLIENT_MESSAGES],
    }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "svc Wire deltas",
            "version": version,
            "description": (
                "Wire envelopes (`op`, `type`, `topic`, `seq`, `source_ts`, `emit_ts`, `source`, `data`) "
                "published by the projector after each committed change a Wire client can see, and served one "
                "topic at a time as server-sent events. Kafka topic names are prefixed by SVC_TOPIC_NAMESPACE "
                "when set. See docs/wire-deltas.md."
            ),
        },
        "defaultContentType": "application/json",
        "servers": {"kafka": {"host": "localhost:9092", "protocol": "kafka",
                              "description": "KAFKA_BOOTSTRAP (embedded tansu by default)"},
                    "api": {"host": "localhost:8000", "protocol": "http",
                            "description": "The REST API (`svc up --port`); streams are text/event-stream"}},
        "channels": channels,
        "operations": operations,
        "components": {"schemas": dict(schemas), "messages": messages},
    }
