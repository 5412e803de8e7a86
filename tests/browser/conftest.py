"""Real-browser fixtures: the app served by ``streamlit run`` and Debian's chromium via playwright.

No browser is downloaded: playwright launches ``/usr/bin/chromium`` (``make chromium`` installs it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.conftest import share_compiled_programs

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# A page draws in several messages (a chart's title after its frame), later on a busy machine: the tests'
# visibility checks retry for this long instead of reading the page once.
expect.set_options(timeout=60_000)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(cache: Path) -> Iterator[str]:
    """Serve app.py with ``streamlit run`` on a free loopback port and fit cache ``cache``; yield its URL."""
    port = _free_port()
    share_compiled_programs(cache)  # programs the run compiled already are loaded, not compiled again
    env = dict(os.environ, EVAL_CACHE_DIR=str(cache))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("streamlit did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # stopping takes longer on a loaded machine; it is not what is tested
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app served once for the session, with a fresh fit cache."""
    with serve(tmp_path_factory.mktemp("cache")) as url:
        yield url


@pytest.fixture
def fresh_app_url(tmp_path: Path) -> Iterator[str]:
    """The app on a server of its own, which no run of app.py has touched yet."""
    with serve(tmp_path) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run `make chromium`")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, app_url):
    """A fresh browser page; ``page.goto(app_url)`` opens the app."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    context.close()


@pytest.fixture
def abilities_with_map(page, app_url):
    """The app opened on Abilities with the MAP sampler chosen (fits in about a second)."""
    page.goto(app_url)
    page.get_by_role("heading", name="Data").wait_for(timeout=120_000)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Abilities").click()
    page.get_by_role("heading", name="Abilities").wait_for()
    _choose_map(page)
    return page


def _choose_map(page) -> None:
    page.get_by_role("button", name="Fit", exact=True).wait_for()  # the page has finished drawing
    sampler = page.locator("[data-testid='stSelectbox']").filter(has_text="Sampler")
    if not sampler.is_visible():  # collapsed when the app server's cache already holds a fit
        page.get_by_text("Fit settings").click()
    option = page.get_by_role("option", name="map", exact=True)
    # A click during the expander's opening animation does not open the list, and a rerun of the page
    # can close the open list under the click (the option is detached): open it again.
    for attempt in range(3):
        if not option.is_visible():
            sampler.click()
        try:
            option.click(timeout=5_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


@pytest.fixture
def choose_map():
    """Chooses the MAP sampler on the Abilities page now shown (the page must be drawing its Fit button)."""
    return _choose_map


def _upload_judgments(page, path) -> None:
    page.get_by_text("Upload a CSV").click()
    uploader = page.locator("[data-testid='stFileUploader']").filter(has_text="Judgments CSV")
    uploader.locator("input[type='file']").set_input_files(str(path))


@pytest.fixture
def upload_judgments():
    """Chooses "Upload a CSV" on the Data page now shown and gives ``path`` to its judgments uploader (by its
    label: once data are valid the page has a second uploader, for LLM-judge votes)."""
    return _upload_judgments


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A browser test that fails prints its page's address and text then: a failure on CI can be read from
    the log (a timed-out ``wait_for`` says only what it waited for)."""
    report = yield
    page = getattr(item, "funcargs", {}).get("page")
    if report.when == "call" and report.failed and page is not None:
        try:
            shown = page.inner_text("body", timeout=5_000)
        except PlaywrightError as err:
            shown = f"(the page could not be read: {err})"
        report.sections.append(("page when the test failed", f"{page.url}\n{shown[-6_000:]}"))
    return report
