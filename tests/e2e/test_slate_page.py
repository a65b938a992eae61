"""The first-party slate page in a real headless Chromium against the served stack: a projector
process, granian serving the API, the sandbox dataset fed by the test. One browser session: the
page shows every game of the sandbox day with kickoff times in the viewer's zone and each
market's consensus prices, no-vig probabilities and the cost line; a sandbox delta changes it;
an API process killed outright and restarted (same port) is followed without a reload; the
browser's console shows no error."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import date, datetime, timezone

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from infra.net import free_port
from schemas.cost_line import RG_LINE
from tests.integration.test_wire_crash import kill_outright
from tests.support import projection_events as ev
from tests.support.browser import chromium
from tests.support.live_server import api_process
from tests.support.projection_harness import caught_up, start_projector

DAY = date(2024, 9, 8)
VIEWER_ZONE = "America/New_York"
KICKOFFS = {("NYG", "MIN"): datetime(2024, 9, 8, 17, 0, tzinfo=timezone.utc),
            ("KC", "BAL"): datetime(2024, 9, 8, 20, 25, tzinfo=timezone.utc),
            ("DET", "LA"): datetime(2024, 9, 9, 0, 20, tzinfo=timezone.utc)}  # 8:20 PM Sunday in New York
GAMES = [ev.game(home, away, day=DAY, kickoff=kickoff) for (home, away), kickoff in KICKOFFS.items()]
TEAMS = [ev.team(key) for pair in KICKOFFS for key in pair]
# changes reach the page within this long: generous, the CI box runs other tests beside it
CHANGE_SECONDS = 15
LOAD_SECONDS = 30  # the page, its slate, a ticket, the socket and every snapshot
BACK_SECONDS = 45  # the API killed, restarted on its port, and the page caught up


def _quotes(gid: str, minute: float, shift: int = 0) -> list:
    out = []
    for i, book in enumerate(("dk", "fd")):
        out += [ev.quote(gid, book, [-150 - shift - i * 5, 130 + shift + i * 5], minute=minute),
                ev.quote(gid, book, [-110 - i * 2, -110 + i * 2], market_type="spreads", point="-3.5", minute=minute),
                ev.quote(gid, book, [-105, -115 - i], market_type="totals", point="47.5", minute=minute)]
    return out


def _text(driver, css: str) -> str:
    """The element's text, or "" while it is absent or was replaced between the find and the read
    (the page re-renders a game on each delta): a wait polls again rather than failing."""
    try:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        return found[0].text if found else ""
    except StaleElementReferenceException:
        return ""


def _wait(driver, seconds: float, until, what: str) -> float:
    """Seconds until `until(driver)` held; fails naming `what`, with the page's status and console."""
    started = time.monotonic()
    try:
        WebDriverWait(driver, seconds, poll_frequency=0.1).until(until)
    except TimeoutException:
        raise AssertionError(f"page never showed {what} in {seconds} s; status {_text(driver, '#status')!r}; "
                             f"console {driver.get_log('browser')}") from None
    return time.monotonic() - started


def _severe(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


async def test_the_slate_page_follows_the_sandbox_live_across_an_api_restart(settings, topics, tmp_path):
    await ev.publish(settings, [*TEAMS, *GAMES, *(q for g in GAMES for q in _quotes(g.game_id, 1))], dataset="test")
    projector = start_projector(settings, tmp_path / "projector.log")
    port = free_port()
    env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
    api_args = (settings.database_url, settings.data_dir, settings.key_secret)
    try:
        assert await caught_up(settings, 120)
        with chromium(time_zone=VIEWER_ZONE) as driver:
            with api_process(*api_args, tmp_path / "api.log", port=port, **env) as (base, proc):
                driver.get(f"{base}/?mode=test")
                driver.execute_script("window.loadedOnce = true")  # gone if the page ever reloads

                # every game of the sandbox day, each main line priced (its snapshot arrived)
                _wait(driver, LOAD_SECONDS, lambda d: len(d.find_elements(By.CSS_SELECTOR, "td.price")) == 3 * 3 * 2,
                      "every game's prices")
                articles = driver.find_elements(By.CSS_SELECTOR, "article.game")
                assert [a.get_attribute("data-game") for a in articles] == [g.game_id for g in GAMES]
                assert driver.find_element(By.ID, "tz").text == VIEWER_ZONE
                late = driver.find_element(By.CSS_SELECTOR, f"#g-{GAMES[2].game_id} time")
                assert late.get_attribute("datetime") == "2024-09-09T00:20:00.000Z" and "8:20" in late.text
                # consensus and no-vig of the moneyline: median of -150/-155 and of +130/+135
                first = f"#g-{GAMES[0].game_id} table[data-market] tbody tr"
                rows = driver.find_elements(By.CSS_SELECTOR, first)
                assert rows[0].find_element(By.CSS_SELECTOR, ".price").text == "1.66"
                assert rows[0].find_element(By.CSS_SELECTOR, ".prob").text.endswith("%")
                # the cost line beside every market's prices, and no bookmaker named anywhere
                blocks = driver.find_elements(By.CSS_SELECTOR, ".market-block")
                assert len(blocks) == 9 and all(b.find_element(By.CSS_SELECTOR, ".rg").text == RG_LINE for b in blocks)
                page = driver.find_element(By.TAG_NAME, "body").text
                assert "Dk" not in page and "Fd" not in page
                # landmarks; the keyboard's first stop skips to the games
                for css in ("header", "main", "footer", "nav"):
                    assert driver.find_elements(By.CSS_SELECTOR, css), css
                driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
                assert driver.switch_to.active_element.get_attribute("class") == "skip"
                driver.switch_to.active_element.send_keys(Keys.ENTER)
                assert driver.switch_to.active_element.get_attribute("id") == "games"

                # a sandbox delta changes the page
                gid = GAMES[0].game_id
                await ev.publish(settings, [ev.state(gid, "live", home=7, away=3, minute=30, period="Q2",
                                                     clock="5:00")], dataset="test")
                took = _wait(driver, CHANGE_SECONDS, lambda d: "3 – 7" in _text(d, f"#g-{gid} .score"), "the new score")
                assert "Q2 5:00" in _text(driver, f"#g-{gid} .clock")
                assert driver.find_element(By.CSS_SELECTOR, f"#g-{gid}").get_attribute("data-status") == "live"
                print(f"delta on the page {took:.2f} s after publishing (publish, fold, relay, fan-out, render)")
                assert _severe(driver) == []
                kill_outright(proc.pid)

            # the API process is gone (SIGKILL: no close frame); changes go on meanwhile
            await ev.publish(settings, [ev.state(gid, "live", home=14, away=3, minute=40, period="Q3", clock="9:12"),
                                        *_quotes(GAMES[1].game_id, 41, shift=60)], dataset="test")
            await asyncio.sleep(1)  # as the supervisor waits before a restart
            with api_process(*api_args, tmp_path / "api-restarted.log", port=port, **env):
                _wait(driver, BACK_SECONDS, lambda d: "3 – 14" in _text(d, f"#g-{gid} .score"),
                      "the score changed while the API was down")
                moneyline = f"#g-{GAMES[1].game_id} table[data-market] tbody tr .price"
                _wait(driver, CHANGE_SECONDS, lambda d: _text(d, moneyline) == "1.47", "the moved price")
                assert driver.execute_script("return window.loadedOnce") is True
                _wait(driver, CHANGE_SECONDS, lambda d: "Live" in _text(d, "#status"), "the live status again")
                # connection attempts while the API was down are the only errors: network ones
                assert [e for e in _severe(driver) if e["source"] != "network"] == []
                if os.environ.get("SVC_PAGE_SCREENSHOT"):
                    driver.save_screenshot(os.environ["SVC_PAGE_SCREENSHOT"])
    finally:
        projector.terminate()
        projector.wait(30)
