"""A page opened by its URL on a fresh server is served by app.py: its navigation, not the pages/ files.

Until some session calls ``st.navigation``, Streamlit serves a ``pages/`` folder in its legacy
multipage mode: the page runs without app.py and every file of the folder is listed as a page
(``ui.navigation.serve_through_app`` hands such a run over to app.py).
"""

from __future__ import annotations

from playwright.sync_api import expect


def test_a_page_opened_by_url_on_a_fresh_server_shows_the_apps_navigation(browser, fresh_app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{fresh_app_url}/selection")
        page.get_by_role("heading", name="Prompt selection").wait_for(timeout=120_000)
        nav = page.locator("[data-testid='stSidebarNav']")
        nav.get_by_text("Human cost").wait_for()
        links = nav.locator("a").all_inner_texts()
        assert not any(name in text for text in links for name in ("common", "mapping", "engine", "text")), links
        # app.py's sidebar chrome ran (it draws after the page); a failure prints what the page shows
        expect(page.locator("[data-testid='stSidebar']").get_by_text("Fit:", exact=False).first).to_be_visible()
    finally:
        context.close()
