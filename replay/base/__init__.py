"""The base layer: what every other part of replay, the fakes included, stands on.

Errors (``errors``), the file formats (``formats``, the case file ``case``, the snapshot's
``manifest``, ``worldstate`` and its loader ``snapshot``), the content-addressed blob store
(``blobs``), git helpers (``gitrepo``, ``sharedgit``) and the vocabularies (``eventkinds``,
``outcomes``). Nothing here imports anything of the project outside this package;
``tests/architecture.py`` enforces it.
"""
