"""Take the README's screenshot, ``docs/screenshot.png``: the Leaderboard page on the bundled HANNA ratings.

The app is served and driven as the browser tests do (``tests/browser/conftest.py``: ``streamlit run`` on a
free loopback port, Debian's chromium through playwright, a fresh fit cache); the PNG is reduced to a
palette of 256 colours so that it stays small in the repository.

Usage (from the repository's root; ``PYTHONPATH=.`` because the browser tests' settings are borrowed from
``tests/``, which is not installed)::

    PYTHONPATH=. .venv/bin/python scripts/make_screenshot.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

from lib.io.paths import ROOT
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, serve

OUT = ROOT / "docs" / "screenshot.png"
VIEWPORT = {"width": 1280, "height": 800}


def main() -> None:
    with tempfile.TemporaryDirectory() as cache, serve(Path(cache)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/leaderboard")
        page.get_by_role("heading", name="Leaderboard").wait_for(timeout=120_000)
        # The ranking's table and forest plot, drawn once the default fit (MAP + Laplace) is done.
        page.get_by_text("Skill per system: posterior mean and 95% interval").first.wait_for(timeout=300_000)
        # The forest plot of the skills, below the tabs that lead to ranks, win probabilities and Bradley-Terry.
        page.locator(".js-plotly-plot").first.evaluate("plot => plot.scrollIntoView({block: 'end'})")
        page.wait_for_timeout(3_000)  # the plotly figure's first frame
        page.screenshot(path=str(OUT))
        browser.close()
    Image.open(OUT).convert("RGB").quantize(colors=256).save(OUT, optimize=True)
    print(f"{OUT.relative_to(ROOT)}: {OUT.stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
