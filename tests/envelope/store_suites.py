"""Shared by the ref store's reliability suites: the portable (non-POSIX)
capabilities, the size of a run, and the PostgreSQL store's application role.

PORTABLE switches off what only POSIX offers (O_NOFOLLOW, owners and modes,
probing a pid, fsync of a directory), so the path a Windows host takes runs
on Linux; the store's behaviour under test stays the real one.

A `deep` run (the Hypothesis profile `deep` that `make test-deep` loads through
QDSL_HYPOTHESIS_PROFILE=deep) runs the suites ten times longer.
"""

from __future__ import annotations

import os

from hypothesis import settings
from sqlalchemy import Engine, text

from qdsl.envelope.atomic import Caps

PORTABLE = Caps(nofollow=False, posix_modes=False, pid_probe=False, dir_fsync=False)


def deep() -> bool:
    profile = getattr(settings, "_current_profile", None)
    return "deep" in (profile, os.environ.get("QDSL_HYPOTHESIS_PROFILE"))


# A role that is no superuser and holds only what a deployment's application
# user needs on qdsl_refs (tests/envelope/conftest.py makes it).
REF_WRITER = "qdsl_test_ref_writer"


def writer_engine(url: str) -> Engine:
    """An engine whose sessions run as REF_WRITER, so row-level security holds."""
    from qdsl.facts.db import make_engine

    return make_engine(url, connect_args={"options": f"-c role={REF_WRITER}"})


def empty_refs_table(admin: Engine) -> None:
    with admin.begin() as conn:
        conn.execute(text("TRUNCATE qdsl_refs"))
