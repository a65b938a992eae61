"""The calculations and formulas API through the whole HTTP app (front door, access, errors).

No database: these routes compute only. Each test gets its own app, and every request arrives
from its own address, so the anonymous rate window (60 calls per operation) never interferes.
"""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from litestar.testing import TestClient

from api.app import create_app, create_litestar
from api.calc_examples import REQUESTS
from calc.run import CALCULATIONS, decode
from api.conventions import RG_LINE
from infra.settings import load_settings
from domain import formula_cards as cards

NAMES = sorted(CALCULATIONS)


class EachRequestFromItsOwnAddress:
    """ASGI wrapper: a new client address per HTTP request."""

    def __init__(self, app) -> None:
        self.app = app
        self.count = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            self.count += 1
            n = self.count
            scope = {**scope, "client": (f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}", 50000)}
        await self.app(scope, receive, send)


def make_client() -> TestClient:
    app = create_app(load_settings(env={}, use_stack=False))
    return TestClient(EachRequestFromItsOwnAddress(app), raise_server_exceptions=False)


@pytest.fixture
def client():
    with make_client() as c:
        yield c


def post(client: TestClient, name: str, body) -> tuple[int, dict]:
    response = client.post(f"/v1/calculations/{name}", json=body)
    return response.status_code, response.json()


# --- results ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_each_calculation_answers_with_card_inputs_and_rg_line(client, name):
    response = client.post(f"/v1/calculations/{name}", json=REQUESTS[name])
    assert response.status_code == 200, response.text
    assert response.headers["request-id"].startswith("req_")
    body = response.json()
    assert body["object"] == "calculation" and body["name"] == name
    assert body["rg_line"] == RG_LINE
    assert body["formula"] == body["formulas"][0]
    assert cards.get(body["formula"]).calculation == name
    assert body["inputs"] == msgspec.to_builtins(decode(name, json.dumps(REQUESTS[name])))
    assert body["source"] and body["as_of"].endswith("Z")
    detail = client.get(f"/v1/formulas/{body['formula']}")
    assert detail.status_code == 200 and detail.json()["ref"] == body["formula"]


@pytest.mark.parametrize("method", ["multiplicative", "additive", "power", "shin", "odds_ratio"])
def test_minus_110_both_sides(client, method):
    status, body = post(client, "devig", {"odds": [-110, -110], "format": "american", "method": method})
    assert status == 200
    result = body["result"]
    assert result["probabilities"] == [0.5, 0.5]
    assert round(result["overround"], 6) == 0.047619
    assert round(result["hold"], 6) == 0.045455
    assert body["formula"] == f"devig.{method}@1"


def test_devig_flags_a_probability_outside_the_unit_interval(client):
    status, body = post(client, "devig", {"odds": [1.25, 1.9, 50], "method": "additive"})
    assert status == 200
    result = body["result"]
    assert result["in_range"] is False
    assert result["probabilities"][2] < 0 and result["fair_odds"][2] is None
    assert any("outside (0, 1)" in m for m in result["messages"])


def test_strings_are_read_exactly(client):
    status, body = post(client, "convert", {"price": "10/11", "format": "fractional"})
    assert status == 200
    assert body["result"]["american"] == -110 and body["result"]["fractional"] == "10/11"
    status, body = post(client, "payout", {"odds": "1.1", "stake": "0.1"})
    assert body["result"]["payout"] == 0.11  # 0.1 x 1.1 exactly, not 0.11000000000000001


def test_kelly_stakes_nothing_without_an_edge(client):
    status, body = post(client, "kelly", {"odds": 2.5, "probability": 0.4, "bankroll": 1000})
    assert status == 200
    assert body["result"]["stake_fraction"] == 0 and body["result"]["stake"] == 0
    assert body["result"]["messages"]


# --- problems --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, body, param", [
    ("devig", {"odds": [-110, 50], "format": "american"}, "odds[1]"),
    ("devig", {"odds": [-99.5, -110], "format": "american"}, "odds[0]"),
    ("devig", {"odds": [1, 2]}, "odds[0]"),
    ("devig", {"odds": [2, 0.5]}, "odds[1]"),
    ("devig", {"odds": ["0/1", "5/2"], "format": "fractional"}, "odds[0]"),
    ("devig", {"odds": ["5/2", "-1/2"], "format": "fractional"}, "odds[1]"),
    ("convert", {"price": 1.5, "format": "implied"}, "price"),
    ("payout", {"odds": 2, "stake": 0}, "stake"),
    ("payout", {"odds": 2, "stake": "1e20"}, "stake"),
    ("parlay", {"legs": [{"odds": 2}, {"odds": 1}], "stake": 1}, "legs[1].odds"),
    ("ev", {"odds": 2, "probability": 1.2}, "probability"),
    ("kelly", {"odds": 2, "probability": 0.6, "fraction": 0}, "fraction"),
    ("arbitrage", {"odds": [2, 2], "stake": -1}, "stake"),
    ("middle", {"kind": "total", "positions": [
        {"side": "over", "line": 44.25, "odds": 2, "stake": 1}, {"side": "under", "line": 47, "odds": 2, "stake": 1}]},
     "positions[0].line"),
    ("middle", {"kind": "spread", "positions": [
        {"side": "home", "line": 3, "odds": 2, "stake": 1}, {"side": "over", "line": 47, "odds": 2, "stake": 1}]},
     "positions[1].side"),
    ("clv", {"taken_odds": 2}, "closing_probability"),
    ("clv", {"taken_odds": 2, "closing_probability": 0.5, "closing_odds": [2, 2], "selection": 0}, "closing_odds"),
    ("clv", {"taken_odds": 2, "closing_odds": [2, 2], "selection": 2}, "selection"),
])
def test_bad_values_are_invalid_inputs_naming_the_field(client, name, body, param):
    status, problem = post(client, name, body)
    assert status == 422, problem
    assert problem["code"] == "invalid_inputs" and problem["param"] == param
    assert problem["request_id"].startswith("req_")


@pytest.mark.parametrize("name, body, param", [
    ("devig", {"odds": [2, 2], "colour": "red"}, "colour"),
    ("devig", {"odds": [2, 2], "method": "magic"}, "method"),
    ("devig", {"odds": [2, 2], "format": "hex"}, "format"),
    ("devig", {"odds": [2]}, "odds"),
    ("devig", {"odds": "2, 2"}, "odds"),
    ("devig", {"odds": [2, "two"]}, "odds[1]"),
    ("devig", {"odds": [2, True]}, "odds[1]"),
    ("devig", {}, "odds"),
    ("parlay", {"legs": [{"odds": 2}, {"odds": 2, "status": "maybe"}], "stake": 1}, "legs[1].status"),
    ("parlay", {"legs": [{"odds": 2}, {"odds": 2, "extra": 1}], "stake": 1}, "legs[1].extra"),
    ("clv", {"taken_odds": 2, "closing_odds": [2, 2], "selection": -1}, "selection"),
])
def test_bad_shapes_are_invalid_requests_naming_the_field(client, name, body, param):
    status, problem = post(client, name, body)
    assert status == 400, problem
    assert problem["code"] == "invalid_request" and problem["param"] == param


@pytest.mark.parametrize("raw", [b"not json", b"{", b"[]", b"null", b'{"odds": [1e400, 2]}'])
def test_malformed_bodies_are_invalid_requests(client, raw):
    response = client.post("/v1/calculations/devig", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_request"


def test_unknown_calculation_is_not_found_naming_name(client):
    status, problem = post(client, "martingale", {"odds": [2, 2]})
    assert status == 404
    assert problem["code"] == "not_found" and problem["param"] == "name"


def test_wrong_method_is_refused(client):
    response = client.get("/v1/calculations/devig")
    assert response.status_code == 405
    assert "POST" in response.headers["allow"]


# --- formulas --------------------------------------------------------------------------------------

def test_formulas_list_and_resolve(client):
    response = client.get("/v1/formulas")
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "list" and body["has_more"] is False and body["next_cursor"] is None
    assert [f["id"] for f in body["data"]] == [c.id for c in cards.CARDS]
    for formula in body["data"]:
        assert formula["object"] == "formula" and formula["ref"] == f"{formula['id']}@{formula['version']}"
        assert formula["sources"] and formula["inputs"] and formula["outputs"] and formula["formula"]
        for ref in (formula["id"], formula["ref"]):
            detail = client.get(f"/v1/formulas/{ref}")
            assert detail.status_code == 200 and detail.json() == formula


@pytest.mark.parametrize("card_id", ["devig.shin@2", "devig.magic", "kelly"])
def test_unknown_formula_is_not_found(client, card_id):
    response = client.get(f"/v1/formulas/{card_id}")
    assert response.status_code == 404
    assert response.json()["param"] == "card_id"


# --- documentation ---------------------------------------------------------------------------------

def test_openapi_documents_every_calculation_with_examples():
    document = create_litestar(load_settings(env={}, use_stack=False)).openapi_schema.to_schema()
    for name in NAMES:
        operation = document["paths"][f"/v1/calculations/{name}"]["post"]
        assert operation["operationId"] == f"calculations_{name}"
        assert json.dumps(operation["requestBody"]).count(json.dumps(REQUESTS[name])[1:-1]) >= 1
        ok = operation["responses"]["200"]["content"]["application/json"]
        example = next(iter(ok["examples"].values()))["value"]
        assert example["name"] == name and example["rg_line"] == RG_LINE
        assert "422" in operation["responses"] and "400" in operation["responses"]
    for path in ("/v1/formulas", "/v1/formulas/{card_id}"):
        assert "get" in document["paths"][path]
    assert "/v1/calculations/{name}" not in document["paths"]


def test_openapi_examples_satisfy_their_schemas():
    import jsonschema_rs  # comes with schemathesis, a test dependency

    document = json.loads(msgspec.json.encode(
        create_litestar(load_settings(env={}, use_stack=False)).openapi_schema.to_schema()))

    def errors(ref: str, value) -> list[str]:
        validator = jsonschema_rs.validator_for({"$ref": ref, "components": document["components"]})
        return [str(e) for e in validator.iter_errors(value)]

    checked = 0
    for name in NAMES:
        operation = document["paths"][f"/v1/calculations/{name}"]["post"]
        request = operation["requestBody"]["content"]["application/json"]["schema"]
        for example in request["examples"]:
            assert errors(request["allOf"][0]["$ref"], example) == [], name
            checked += 1
        ok = operation["responses"]["200"]["content"]["application/json"]
        for example in ok["examples"].values():
            assert errors(ok["schema"]["$ref"], example["value"]) == [], name
            checked += 1
    assert checked == 2 * len(NAMES)


# --- no input gives a 500 --------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "1/0", "0/0", "evens", "-110", "+100", "1e999", "1e-999", "NaN", "-0", "0.0", "10/11",
                     "9" * 30, "1" * 70, "99999999999999999999/1", "1/99999999999999999999"]),
    st.text(max_size=12),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


@st.composite
def bodies(draw):
    name = draw(st.sampled_from([*NAMES, "nope"]))
    template = dict(REQUESTS.get(name, REQUESTS["devig"]))
    for key in draw(st.lists(st.sampled_from(sorted(template)), unique=True)):
        template[key] = draw(values)  # break some fields, keep the rest valid
    if draw(st.booleans()) and isinstance(template.get("odds"), list):
        template["odds"] = draw(st.lists(st.one_of(st.floats(-1e6, 1e7), st.integers(-10**9, 10**9), scalars),
                                         min_size=0, max_size=6))
    return name, draw(st.one_of(st.just(template), values))


@pytest.fixture(scope="module")
def shared_client():
    with make_client() as c:
        yield c


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=bodies())
def test_no_input_gives_a_server_error(shared_client, case):
    name, body = case
    response = shared_client.post(f"/v1/calculations/{name}", json=body)
    assert response.status_code in ({404} if name == "nope" else {200, 400, 422}), response.text
    payload = response.json()
    if response.status_code == 200:
        assert payload["rg_line"] == RG_LINE and payload["name"] == name
    else:
        assert payload["code"] in {"invalid_request", "invalid_inputs", "not_found"} and payload["detail"]


numbers = st.one_of(
    st.floats(-1e16, 1e16), st.integers(-10**16, 10**16),
    st.sampled_from([1.000001, 1.0000001, 1000001, 1000002, 1e-6, 0.999999, 100, -100, -101, 99.99, 2, 0, 1e15,
                     "1e15", "1/3", "1e-40", "1e40", "-0", "0.5", "44.5", "7"]),
)
METHOD_NAMES = ["multiplicative", "additive", "power", "shin", "odds_ratio"]


@st.composite
def well_shaped_bodies(draw):
    """Bodies of the right shape with extreme or invalid numbers: these reach the maths itself."""
    name = draw(st.sampled_from(NAMES))
    body = dict(REQUESTS[name])
    for key, value in list(body.items()):
        if key in ("odds", "closing_odds"):
            body[key] = draw(st.one_of(st.lists(numbers, min_size=2, max_size=8),
                                       st.lists(st.floats(1.000001, 1e6), min_size=2, max_size=100)))
        elif key == "legs":
            body[key] = [{"odds": draw(numbers), "status": draw(st.sampled_from(["open", "won", "lost", "push", "void"]))}
                         for _ in range(draw(st.integers(2, 30)))]
        elif key == "positions":
            body[key] = [{"side": draw(st.sampled_from(["home", "away", "over", "under"])), "line": draw(numbers),
                          "odds": draw(numbers), "stake": draw(numbers)} for _ in range(2)]
        elif key == "method":
            body[key] = draw(st.sampled_from(METHOD_NAMES))
        elif key == "format":
            body[key] = draw(st.sampled_from(["decimal", "american", "fractional", "implied"]))
        elif isinstance(value, (int, float)) and draw(st.booleans()):
            body[key] = draw(numbers)
    return name, body


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=well_shaped_bodies())
def test_extreme_numbers_never_fail_and_answer_quickly(shared_client, case):
    import time

    name, body = case
    # CPU time of this process (the app runs in it): a solver that spins on an extreme input
    # shows here, while time spent waiting for the neighbours of a loaded box does not
    started = time.process_time()
    response = shared_client.post(f"/v1/calculations/{name}", json=body)
    assert time.process_time() - started < 2
    assert response.status_code in {200, 400, 422}, response.text
    if response.status_code == 422:
        assert response.json()["code"] in {"invalid_inputs", "calc_not_available"}
