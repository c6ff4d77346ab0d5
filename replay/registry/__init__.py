"""The package registries frozen at T: a shared blob store, recording, and serving.

Python (PyPI's simple and JSON APIs, file downloads) and npm (packuments, tarballs), each
showing only what was uploaded at or before T. See ``serve`` for how the gateway mounts it.
"""

from __future__ import annotations

from replay.base.blobs import BlobError, BlobStore
from replay.registry.record import RecordError, Target, default_index_url, record_python
from replay.registry.record_npm import record_npm
from replay.registry.serve import HOSTS, Registry, host_apps, registry_app, serve_snapshot

__all__ = [
    "HOSTS",
    "BlobError",
    "BlobStore",
    "RecordError",
    "Registry",
    "Target",
    "default_index_url",
    "host_apps",
    "record_npm",
    "record_python",
    "registry_app",
    "serve_snapshot",
]
