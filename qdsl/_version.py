"""The version of qdsl: the one place it is written.

pyproject.toml reads it at build time (`[tool.setuptools.dynamic]`), so the
wheel's metadata and `qdsl --version` cannot disagree, and the command prints
it without loading `importlib.metadata`.
"""

__version__ = "0.1.0"

# The name on the package index: `qdsl` there is another project (a helper for
# nested dicts), so `pip install qdsl` would install it. The import root and the
# command stay `qdsl`; only `pip install` and `importlib.metadata` use this name.
DISTRIBUTION = "qdsl-verified"
