"""The settings readers' view of the environment: `os.environ` itself, read per call.

Every read goes through `os.environ.get`, so whatever changes the environment
through `os.environ` (`monkeypatch.setenv`, `mock.patch.dict`) or replaces it
(`mock.patch("os.environ", {...})`) is seen at once. A lookup of an unset name
costs about a microsecond (the Mapping raises and catches a KeyError); the
readers that run per request cache what they build from the values under the
key `environ_key` gives, so only that lookup is paid per request.
"""

from __future__ import annotations

import os


def getenv(name: str) -> str | None:
    """`os.environ.get(name)`."""
    return os.environ.get(name)


def environ_key(names: tuple[str, ...]) -> tuple[str | None, ...]:
    """`tuple(os.environ.get(n) for n in names)`: the key of a cache of settings
    read from those names, which changes whenever one of them does."""
    get = os.environ.get
    return tuple([get(n) for n in names])
