"""The project's tests: a package, so that ``tests`` names this folder and not the ``tests`` package that
ppi-python installs into site-packages (without this file, ``from tests.x import ...`` found that one)."""
