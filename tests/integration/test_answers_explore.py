import asyncpg, json, pytest
from api.access.store import create_key
from tests.support.api_fixtures import *  # noqa

QS = ["What is +150 in decimal odds?", "How much does a $20 bet at 5/2 pay?", "hold on -110 -110",
      "Bills Rams spread", "Chiefs Ravens score week 1 2024", "is mahomes injured", "mahomes passing yards",
      "what nfl games are on 2024-09-08", "what does vig mean", "is sports betting legal in NJ", "who will win the super bowl",
      "bills rams odds", "parlay -110 +150 $10", "whats the weather in paris"]

async def test_explore(api, api_db):
    conn = await asyncpg.connect(api_db)
    key, _ = await create_key(conn, b"test-secret", account="ans", plan="scale", scopes={"run:answers"}, mode="live")
    await conn.close()
    for q in QS:
        r = await api.post("/v1/answers", json={"question": q}, headers={"Authorization": f"Bearer {key}"})
        b = r.json()
        print("\n##", q, r.status_code, b.get("category"), b.get("tier"))
        if r.status_code != 201:
            print(b); continue
        for s in b["sentences"]: print("  ", s["text"], s["citations"])
        print("   A:", [a["text"] for a in b["assumptions"]])
        print("   F:", [(f["field"], f["display"]) for f in b["figures"]][:6])
