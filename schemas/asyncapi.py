"""The AsyncAPI 3.0 document of what the engine publishes for live clients, built from the
Structs in `schemas.wire` (so the document cannot drift from the code that validates deltas).

Today that is the `wire.deltas` Kafka topic of each dataset; the WebSocket/SSE bridge that will
serve these envelopes to clients is not built yet.
"""

from __future__ import annotations

from typing import Any

import msgspec

from schemas.wire import DATA_BY_TYPE, Envelope

TITLES = {"game.state": "Game state", "market.update": "Market update", "market.suspended": "Market suspended"}
TOPIC_PATTERNS = {"game.state": r"^game:gm_[0-9a-hjkmnp-tv-z]{20}$",
                  "market.update": r"^market:mkt_[0-9a-hjkmnp-tv-z]{20}$",
                  "market.suspended": r"^market:mkt_[0-9a-hjkmnp-tv-z]{20}$"}


def _message_name(delta_type: str) -> str:
    return delta_type.replace(".", "_")


def document(version: str) -> dict[str, Any]:
    structs = [Envelope, *dict.fromkeys(DATA_BY_TYPE.values())]
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
    }
    operations = {
        f"receive{key[0].upper()}{key[1:]}": {
            "action": "receive",
            "channel": {"$ref": f"#/channels/{key}"},
            "messages": [{"$ref": f"#/channels/{key}/messages/{name}"} for name in messages],
        }
        for key in channels
    }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "svc Wire deltas",
            "version": version,
            "description": (
                "Envelopes of spec 6.1 (`op`, `type`, `topic`, `seq`, `source_ts`, `emit_ts`, `source`, `data`) "
                "published by the projector after each committed change a Wire client can see. Topic names are "
                "prefixed by SVC_TOPIC_NAMESPACE when set. See docs/wire-deltas.md."
            ),
        },
        "defaultContentType": "application/json",
        "servers": {"kafka": {"host": "localhost:9092", "protocol": "kafka",
                              "description": "KAFKA_BOOTSTRAP (embedded tansu by default)"}},
        "channels": channels,
        "operations": operations,
        "components": {"schemas": dict(schemas), "messages": messages},
    }
