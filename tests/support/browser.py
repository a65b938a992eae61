"""A real headless Chromium for the page tests, driven by Selenium through the system's
chromedriver (Debian's `chromium` and `chromium-driver`; `.ci/run` installs them). Nothing is
downloaded: the browser and its driver are the system's, named by path."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from typing import Iterator

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = os.environ.get("SVC_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SVC_CHROMEDRIVER", "/usr/bin/chromedriver")


@contextmanager
def chromium(width: int = 1280, height: int = 900, time_zone: str | None = None) -> Iterator[webdriver.Chrome]:
    """A headless Chromium window of this size whose console is read back (`driver.get_log("browser")`);
    `time_zone`: the viewer's IANA zone, as the page's `Intl` sees it."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) or shutil.which(path)):
            raise RuntimeError(f"{path} is missing: `apt-get install chromium chromium-driver` (.ci/run does)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--disable-extensions", "--no-first-run", f"--window-size={width},{height}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        if time_zone is not None:
            driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": time_zone})
        yield driver
    finally:
        driver.quit()
