"""GET /v1/reference and /v1/reference/{topic_id} over the shipped library (as the projector
writes it), and library hits in /v1/search."""

from __future__ import annotations

from ingest.library import library_root, read_library
from domain.ids import is_id
from schemas.library import entry_id

FILES = read_library(library_root())
PUBLISHED = {f.entry.slug: f.entry for f in FILES if f.entry.status == "published"}
DRAFTS = {f.entry.slug for f in FILES if f.entry.status == "draft"}
KIND_ORDER = ["term", "rule", "law", "tax", "policy", "guide", "help"]


async def all_pages(api, **params) -> list[dict]:
    out, cursor = [], None
    for _ in range(100):
        page = await api.get("/v1/reference", params={**params, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        assert body["object"] == "list"
        out += body["data"]
        if not body["has_more"]:
            assert body["next_cursor"] is None
            return out
        cursor = body["next_cursor"]
    raise AssertionError("paging did not end")


async def test_without_q_every_published_entry_once_in_topic_order(api):
    entries = await all_pages(api, limit=50)
    assert [e["slug"] for e in entries] != [] and len(entries) == len(PUBLISHED)
    assert {e["slug"] for e in entries} == set(PUBLISHED) and not DRAFTS & {e["slug"] for e in entries}
    keys = [(KIND_ORDER.index(e["kind"]), e["title"]) for e in entries]
    assert [k[0] for k in keys] == sorted(k[0] for k in keys)
    first = (await api.get("/v1/reference")).json()
    assert len(first["data"]) == 20 and first["has_more"]  # default page size


async def test_an_entry_has_every_field_and_opens_by_id_or_slug(api, anonymous_api):
    r = await anonymous_api.get("/v1/reference/vig")  # no key needed
    assert r.status_code == 200, r.text
    vig = r.json()
    source = PUBLISHED["vig"]
    assert vig["object"] == "reference_entry" and vig["id"] == entry_id("vig") and is_id("reference", vig["id"])
    assert (vig["slug"], vig["kind"], vig["title"], vig["summary"]) == ("vig", "term", source.title, source.summary)
    assert vig["aliases"] == source.aliases and vig["body"] == source.body and vig["version"] == 1
    assert vig["sources"][0]["url"] == source.sources[0].url and vig["sources"][0]["publisher"]
    assert vig["reviewed_at"] == source.reviewed_at.isoformat() and vig["stale"] is False
    assert vig["rg_line"] and vig["as_of"].startswith(source.reviewed_at.isoformat())
    assert vig["related"] == [entry_id(s) for s in source.related if s in PUBLISHED]
    assert all(f.count("@") == 1 for f in vig["formulas"]) and vig["source"] == "svc editorial"
    by_id = (await anonymous_api.get(f"/v1/reference/{vig['id']}")).json()
    assert by_id == {**vig, "request_id": by_id["request_id"]}
    law = (await api.get("/v1/reference/us-nj-sports-betting")).json()
    assert law["jurisdictions"] == ["US-NJ"] and "not legal advice" in law["body"] and law["rg_line"]
    help_entry = (await api.get("/v1/reference/problem-not-found")).json()
    assert help_entry["kind"] == "help" and help_entry["rg_line"] is None


async def test_unknown_and_malformed_topics(api):
    for topic in ("no-such-entry", entry_id("no-such-entry"), *DRAFTS):
        r = await api.get(f"/v1/reference/{topic}")
        assert r.status_code == 404 and r.json()["code"] == "not_found" and r.json()["param"] == "topic_id", topic
    for topic in ("Vig", "ref_123", "vig_juice", "x" * 101):
        r = await api.get(f"/v1/reference/{topic}")
        assert r.status_code == 400 and r.json()["code"] == "invalid_request" and r.json()["param"] == "topic_id", topic


async def test_filters(api):
    laws = await all_pages(api, kind="law", limit=50)
    assert laws and all(e["kind"] == "law" for e in laws)
    assert len(laws) == sum(e.kind == "law" for e in PUBLISHED.values())
    nj = {e["slug"] for e in await all_pages(api, jurisdiction="us-nj", limit=50)}
    assert "us-nj-sports-betting" in nj and "us-national-problem-gambling-helpline" in nj  # US entries too
    assert "us-pa-sports-betting" not in nj and "gb-gambling-act-2005" not in nj
    us = {e["slug"] for e in await all_pages(api, jurisdiction="US", limit=50)}
    assert {"us-nj-sports-betting", "us-pa-sports-betting"} <= us and "gb-gambling-act-2005" not in us
    dfs = await all_pages(api, product="dfs", limit=50)
    assert dfs and all("dfs" in e["products"] for e in dfs)
    dk = await all_pages(api, operator="draftkings", limit=50)
    assert dk and all("draftkings" in e["operators"] for e in dk)
    both = await all_pages(api, kind="term", product="dfs", limit=50)
    assert {e["slug"] for e in both} == {s for s, e in PUBLISHED.items() if e.kind == "term" and "dfs" in e.products}


async def test_each_bad_value_is_refused_naming_its_param(api):
    first = (await api.get("/v1/reference", params={"kind": "term", "limit": 5})).json()
    for params, param in (
        ({"kind": "glossary"}, "kind"), ({"jurisdiction": "USA"}, "jurisdiction"), ({"jurisdiction": "US-"}, "jurisdiction"),
        ({"jurisdiction": "US-ABCD"}, "jurisdiction"), ({"product": "casino"}, "product"),
        ({"operator": "DraftKings"}, "operator"), ({"operator": "d"}, "operator"), ({"operator": "x" * 41}, "operator"),
        ({"limit": 0}, "limit"), ({"limit": 51}, "limit"), ({"limit": "ten"}, "limit"), ({"q": ""}, "q"),
        ({"q": "x" * 501}, "q"), ({"q": "a\x00b"}, "q"), ({"q": "   "}, "q"), ({"cursor": "garbage"}, "cursor"),
        ({"kind": "law", "cursor": first["next_cursor"]}, "cursor"),
    ):
        r = await api.get("/v1/reference", params=params)
        assert r.status_code == 400, (params, r.text)
        assert r.json()["code"] == "invalid_request" and r.json()["param"] == param, params
    ok = await api.get("/v1/reference", params={"q": "x" * 500})
    assert ok.status_code == 200


async def test_q_finds_close_spellings_and_slang_best_first(api):
    for q in ("vigorish", "juice", "viggg", "vig"):
        data = (await api.get("/v1/reference", params={"q": q})).json()["data"]
        assert "vig" in [e["slug"] for e in data[:3]], (q, [e["slug"] for e in data[:5]])
    kelly = (await api.get("/v1/reference", params={"q": "kely criterion", "kind": "term"})).json()["data"]
    assert kelly[0]["slug"] == "kelly-criterion"
    paged = await all_pages(api, q="parlay", limit=2)
    whole = (await api.get("/v1/reference", params={"q": "parlay", "limit": 50})).json()["data"]
    assert [e["id"] for e in paged] == [e["id"] for e in whole] and len(whole) > 2
    assert (await api.get("/v1/reference", params={"q": "qqqqzzzz"})).json()["data"] == []


async def test_search_returns_library_hits_of_their_own_kind(api):
    hits = (await api.get("/v1/search", params={"q": "kelly", "kind": "reference"})).json()["data"]
    assert hits and hits[0]["id"] == entry_id("kelly-criterion") and hits[0]["kind"] == "term"
    assert set(hits[0]["context"]) == {"topic", "summary"} and hits[0]["context"]["topic"] == "kelly-criterion"
    assert all(h["kind"] in KIND_ORDER for h in hits)
    law = (await api.get("/v1/search", params={"q": "new jersey sports betting", "kind": "reference"})).json()["data"]
    assert law[0]["kind"] == "law" and law[0]["context"]["jurisdiction"] == "US-NJ"
    mixed = (await api.get("/v1/search", params={"q": "moneyline", "limit": 10})).json()["data"]
    assert entry_id("moneyline") in [h["id"] for h in mixed]
    chiefs = (await api.get("/v1/search", params={"q": "Kansas City Chiefs"})).json()["data"]
    assert chiefs[0]["kind"] == "team"


async def test_test_keys_read_the_library_too(api, api_keys):
    r = await api.get("/v1/reference/vig", headers={"Authorization": f"Bearer {api_keys['test']}"})
    assert r.status_code == 200 and r.json()["slug"] == "vig"


async def test_relevance_over_held_out_queries(api):
    """Queries as people type them, never used to tune the ranking: the expected entry is in the
    top 3 for at least 90% of them (the route itself, over HTTP)."""
    from tests.support.relevance import TOP, load_queries

    held_out = [q for q in load_queries() if q.held_out]
    assert len(held_out) >= 50
    misses = []
    for query in held_out:
        r = await api.get("/v1/reference", params={"q": query.q, "limit": TOP})
        assert r.status_code == 200, r.text
        top = [e["slug"] for e in r.json()["data"]]
        if query.expect not in top:
            misses.append((query.q, query.expect, top))
    assert 1 - len(misses) / len(held_out) >= 0.9, misses


async def test_every_problem_doc_url_opens_its_help_entry(api, anonymous_api):
    """Every code in the catalog links to a help entry this service serves, and a real refusal's
    link opens it too."""
    from api.problems import CATALOG, build_problem

    for code in CATALOG:
        link = build_problem(code, "x", param=None, request_id="req_x", docs_url="https://docs.example").doc_url
        r = await anonymous_api.get(link)
        assert r.status_code == 200, (code, link, r.text)
        assert r.json()["kind"] == "help" and code in r.json()["aliases"], code
    refused = (await api.get("/v1/reference", params={"kind": "glossary"})).json()
    assert (await api.get(refused["doc_url"])).json()["slug"] == "problem-invalid-request"
