"""The stub model's test server: :func:`tests.serving.serving` on h11, quietly.

h11 writes each chunk as the app yields it, which the wire-fault tests (cut streams, stalls)
depend on.
"""

from __future__ import annotations

from functools import partial

from tests.serving import serving as _serving

serving = partial(_serving, http="h11", log_level="critical")
