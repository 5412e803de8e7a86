"""Streamlit helpers shared by ``app.py`` and the pages: the navigation (``navigation``), session
state and URL (``common``), Markdown escaping (``text``), the column-mapping widget (``mapping``) and
the task-engine field (``engine``).

Not pages: ``pages/`` holds only the pages that ``app.py`` lists in ``st.navigation``. Importing this
package does nothing: each page's first statement, :func:`ui.navigation.serve_through_app`, hands a
page that Streamlit ran without app.py over to app.py.
"""
