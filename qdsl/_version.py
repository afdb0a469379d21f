"""The version of qdsl: the one place it is written.

pyproject.toml reads it at build time (`[tool.setuptools.dynamic]`), so the
wheel's metadata and `qdsl --version` cannot disagree, and the command prints
it without loading `importlib.metadata`.
"""

__version__ = "0.1.0"
