"""Files in and out, with no evaluation science: where the project's files are (``paths``), the
rules of every on-disk cache (``cache``), the one reader of users' tables (``tables``), column
roles (``columns``), every CSV written (``export``), uploads kept on disk (``uploads``), tables as
a reader should see them (``display``) and values a user types (``typed``).
"""
