"""A real inspector server on a loopback port and a real headless Chromium (Debian's, with its
chromedriver) driven by selenium. Shared by the browser tests and scripts/inspector_screenshots.py."""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1366,900",
    "--hide-scrollbars",
)


def chromium_paths() -> tuple[str, str] | None:
    """(browser, driver) of an installed Chromium and its matching chromedriver, or None."""
    browser = next((p for n in CHROMIUM_NAMES if (p := shutil.which(n))), None)
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Run ``app`` under uvicorn on a free loopback port in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the inspector did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium with a fresh profile; never downloads a driver (paths are explicit)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    paths = chromium_paths()
    if paths is None:
        raise RuntimeError("no chromium + chromedriver installed")
    browser, driver_path = paths
    with tempfile.TemporaryDirectory(prefix="ms-chromium-") as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = browser
        for flag in CHROMIUM_FLAGS:
            opts.add_argument(flag)
        opts.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
        try:
            driver.set_page_load_timeout(30)
            yield driver
        finally:
            driver.quit()
