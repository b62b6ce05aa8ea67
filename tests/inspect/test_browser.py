"""The inspector in a real headless Chromium: every page renders, the graph draws, search works.

Skips (with the reason) only where no Chromium with its driver is installed; ``scripts/test``
installs Debian's ``chromium`` and ``chromium-driver`` when it can (root and apt-get), so CI runs
these. The server and the browser are started here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory, Settings
from memory_substrate.inspector import build_inspector
from tests.inspect.browser import chromium, chromium_paths, serving
from tests.inspect.seed import seed

pytestmark = pytest.mark.skipif(
    chromium_paths() is None,
    reason="no Chromium here: install Debian's chromium and chromium-driver (scripts/test does when it can)",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("inspect-browser")
    mem = Memory(Settings(root=root / "store", embedder="static"), namespace="payments")
    info = seed(mem)
    Memory(Settings(root=root / "store", embedder="none"), store=mem.store, namespace="other").ingest(
        "conversation", {"title": "other team", "messages": [{"role": "user", "content": "unrelated"}]}
    )
    try:
        with serving(build_inspector(mem)) as base, chromium() as driver:
            yield {"base": base, "driver": driver, "mem": mem, **info}
    finally:
        mem.close()


def _wait(pred: Any, timeout: float = 15.0) -> Any:
    """Poll ``pred`` until truthy; an element that went stale or is not there yet (the page is
    still navigating) counts as not yet."""
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
        WebDriverException,
    )

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = pred()
        except (StaleElementReferenceException, NoSuchElementException):
            value = None
        except WebDriverException as exc:
            # Chromium sometimes reports an element detached by the navigation as this generic
            # error rather than as a stale reference: the same condition, so also "not yet".
            if "does not belong to the document" not in str(exc):
                raise
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting in the browser")
        time.sleep(0.1)


def _open(site: dict[str, Any], path: str) -> Any:
    d = site["driver"]
    d.get(site["base"] + path)
    _wait(lambda: d.execute_script("return document.readyState") == "complete")
    return d


def _entity_id(site: dict[str, Any], name: str) -> str:
    res = site["mem"].query("entities", {"name": name}, {"max_facts": 0})
    return str(res["items"][0]["id"])


PAGES = [
    ("/ns/payments/", "Overview", "#counts"),
    ("/ns/payments/search?q=CockroachDB", "Search playground", "#results"),
    ("/ns/payments/entities", "Entities", "#entities"),
    ("/ns/payments/sources", "Sources", "#sources"),
    ("/ns/payments/log", "Patches and audit events", "details.patch"),
    ("/ns/payments/traces", "Compile traces", "#traces"),
    ("/ns/payments/procedures", "Procedures", "#procedures"),
]


@pytest.mark.parametrize(("path", "heading", "selector"), PAGES)
def test_each_page_renders(site: dict[str, Any], path: str, heading: str, selector: str) -> None:
    from selenium.webdriver.common.by import By

    d = _open(site, path)
    assert d.find_element(By.TAG_NAME, "h1").text.startswith(heading)
    assert d.find_elements(By.CSS_SELECTOR, selector)
    assert d.execute_script("return window.__pwned === undefined")
    _no_console_errors(d)


def _no_console_errors(d: Any) -> None:
    logs = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    assert not logs, logs  # a script error, a refused resource, a Content-Security-Policy violation


def test_no_page_logs_a_console_error(site: dict[str, Any]) -> None:
    """The pages reached by id too, the neighbourhood graph with its library drawing included."""
    from selenium.webdriver.common.by import By

    gateway = _entity_id(site, "Payments Gateway")
    source = site["mem"].query("recent", {}, {"max_items": 50})
    source_id = next(i["id"] for i in source["items"] if str(i["id"]).startswith("src:"))
    for path in (
        f"/ns/payments/entity/{gateway}",
        f"/ns/payments/graph?id={gateway}&depth=2",
        "/ns/payments/graph",
        f"/ns/payments/source/{source_id}",
        f"/ns/payments/trace/{site['trace']}",
        "/ns/payments/health",
        "/ns/payments/traces?kind=extraction",
        "/",
    ):
        d = _open(site, path)
        if "/graph" in path:
            _wait(lambda d=d: d.find_element(By.ID, "graph").get_attribute("data-nodes"))
        _no_console_errors(d)


def test_graph_of_an_id_that_does_not_exist_is_a_404_page(site: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    d = _open(site, "/ns/payments/graph?id=ent:does-not-exist")
    assert d.find_element(By.TAG_NAME, "h1").text == "Not found"
    assert "ent:does-not-exist" in d.find_element(By.TAG_NAME, "main").text
    assert not d.find_elements(By.ID, "graph")  # no lone "missing" node drawn
    logged = d.get_log("browser")  # read (and so cleared): the browser logs the 404 itself, as it should
    assert all("404" in e["message"] for e in logged), logged


def test_entity_timeline_shows_supersession(site: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    d = _open(site, f"/ns/payments/entity/{_entity_id(site, 'Payments Gateway')}")
    rows = d.find_elements(By.CSS_SELECTOR, "#timeline .trow")
    assert len(rows) >= 3
    old = d.find_elements(By.CSS_SELECTOR, "#timeline .trow.superseded")
    assert len(old) == 1 and "PostgreSQL" in old[0].text and "superseded by" in old[0].text
    bars = d.find_elements(By.CSS_SELECTOR, "#timeline rect.bar")
    assert all(b.size["width"] > 0 for b in bars)


def test_graph_draws_nodes(site: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    d = _open(site, f"/ns/payments/graph?id={_entity_id(site, 'Payments Gateway')}")
    _wait(lambda: d.find_element(By.ID, "graph").get_attribute("data-nodes"))
    assert int(d.find_element(By.ID, "graph").get_attribute("data-nodes")) >= 4
    assert d.find_elements(By.CSS_SELECTOR, "#graph canvas")
    _no_console_errors(d)
    drawn = d.execute_script(
        "return window.inspectorGraph.nodes().filter(n => n.renderedBoundingBox().w > 0).length"
    )
    assert drawn >= 4
    # Painted pixels, not just elements: some canvas pixel is not blank.
    painted = d.execute_script(
        "const cs=[...document.querySelectorAll('#graph canvas')];"
        "return cs.some(c=>{const x=c.getContext('2d');if(!x||!c.width)return false;"
        "const d=x.getImageData(0,0,c.width,c.height).data;for(let i=3;i<d.length;i+=16){if(d[i]>0)return true}return false});"
    )
    assert painted


def test_search_typed_into_the_playground_shows_results(site: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    d = _open(site, "/ns/payments/search")
    box = d.find_element(By.ID, "q")
    box.send_keys("roll back argo deploy")
    box.send_keys(Keys.ENTER)
    text = _wait(
        lambda: d.find_elements(By.CSS_SELECTOR, "#results .result") and d.find_element(By.ID, "results").text
    )
    assert "Argo" in text
    assert d.find_elements(By.CSS_SELECTOR, "#results .src")  # retrieval sources shown
    d.find_element(By.CSS_SELECTOR, "input[name=unit][value=segment]").click()
    d.find_element(By.CSS_SELECTOR, "#search-form button").click()
    _wait(lambda: "segment unit" in d.find_element(By.ID, "result-count").text)
    assert d.find_elements(By.CSS_SELECTOR, "#results .result code")  # segment locators


def test_compile_trace_draws_four_dimension_bars(site: dict[str, Any]) -> None:
    """On a trace recorded by a real compile (memory_query context): /traces counts its
    candidates, /trace/<id> lists each with its four ranking dimensions, selected or why not."""
    from selenium.webdriver.common.by import By

    d = _open(site, "/ns/payments/traces")
    row = next(r for r in d.find_elements(By.CSS_SELECTOR, "#traces tr") if site["trace"] in r.text)
    found = int(row.find_elements(By.CSS_SELECTOR, "td.num")[0].text)
    assert found >= 3, row.text
    d = _open(site, f"/ns/payments/trace/{site['trace']}")
    rows = d.find_elements(By.CSS_SELECTOR, "#candidates tr.cand")
    assert len(rows) == found
    for dim in ("relevance", "recency", "stability", "provenance"):
        bars = d.find_elements(By.CSS_SELECTOR, f"#candidates rect.dbar.dim-{dim}")
        assert len(bars) == len(rows) and any(b.size["width"] > 0 for b in bars), dim
    values = [float(t.text) for t in d.find_elements(By.CSS_SELECTOR, "#candidates text.dval")]
    assert len(values) == 4 * len(rows) and all(0.0 <= v <= 1.0 for v in values)
    assert "Payments Gateway uses CockroachDB" in d.find_element(By.ID, "candidates").text  # titles resolved
    assert d.find_elements(By.CSS_SELECTOR, "#candidates tr.cand.rejected .reason")  # why one was left out


def test_namespace_picker_switches_namespace(site: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    d = _open(site, "/ns/payments/")
    Select(d.find_element(By.ID, "ns-select")).select_by_value("other")
    _wait(lambda: d.current_url.endswith("/ns/other/"))
    assert _wait(lambda: "other" in d.find_element(By.TAG_NAME, "h1").text)


def test_screenshots_of_the_main_pages(site: dict[str, Any], tmp_path: Path) -> None:
    d = _open(site, "/ns/payments/")
    shot = tmp_path / "overview.png"
    assert d.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
