"""`qdsl` under an address-space cap, as a container's memory limit would hold it.

    python -m capped --db URL mcp --tenant t1   (PYTHONPATH: this directory)

`QDSL_TEST_MEMORY_CAP_MB` (default 3072) caps the process's address space
(RLIMIT_AS): a request that blows memory up fails there (MemoryError, or the
process dies) instead of taking the machine's memory from everyone else.
"""

from __future__ import annotations

import os
import resource

_cap = int(os.environ.get("QDSL_TEST_MEMORY_CAP_MB", "3072")) * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (_cap, _cap))

if __name__ == "__main__":
    from qdsl.cli.fast import main

    main()
