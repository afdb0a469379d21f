"""Shared by the ref store's reliability suites: the portable (non-POSIX)
capabilities and the size of a run.

PORTABLE switches off what only POSIX offers (O_NOFOLLOW, owners and modes,
probing a pid, fsync of a directory), so the path a Windows host takes runs
on Linux; the store's behaviour under test stays the real one.

A `deep` run (the Hypothesis profile `deep` that `make test-deep` loads through
QDSL_HYPOTHESIS_PROFILE=deep) runs the suites ten times longer.
"""

from __future__ import annotations

import os

from hypothesis import settings

from qdsl.envelope.atomic import Caps

PORTABLE = Caps(nofollow=False, posix_modes=False, pid_probe=False, dir_fsync=False)


def deep() -> bool:
    profile = getattr(settings, "_current_profile", None)
    return "deep" in (profile, os.environ.get("QDSL_HYPOTHESIS_PROFILE"))
