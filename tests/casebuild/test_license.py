"""A public fix's license (issue 34, cause 7): license files by any common name and ending,
recognised by their wording, and ``--license`` for one whose wording is not recognised."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base import gitrepo
from replay.base.errors import InputError
from replay.casebuild.casedir import classify_license, license_at
from replay.casebuild.create import FixSource, spec_from_fix
from tests.casebuild.repos import commit, shapes_repo

MIT = """\
MIT License

Copyright (c) 2021 Acme

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
"""
# reST, as LICENSE.rst files hold it: a title underlined, the clauses as an enumerated list.
BSD3_RST = """\
License
=======

Copyright (c) 2019, Acme. All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

#. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.
#. Redistributions in binary form must reproduce the above copyright notice.
#. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.
"""
BSD2 = BSD3_RST.split("#. Neither")[0]
BSD4 = BSD3_RST + (
    "#. All advertising materials mentioning features or use of this software must display\n"
    "   the following acknowledgement.\n"
)
ISC = """\
ISC License

Copyright (c) 2020, Acme

Permission to use, copy, modify, and/or distribute this software for any
purpose with or without fee is hereby granted, provided that the above
copyright notice and this permission notice appear in all copies.
"""
APACHE = """\
                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/
"""
MPL = "Mozilla Public License Version 2.0\n==================================\n"
PSF = """\
PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2
--------------------------------------------

1. This LICENSE AGREEMENT is between the Python Software Foundation
("PSF"), and the Individual or Organization ("Licensee") accessing and
otherwise using this software ("Python") in source or binary form and
its associated documentation.
"""
ZERO_BSD = ISC.split(", provided")[0] + ".\n"
HPND = """\
Permission to use, copy, modify, and distribute this software and its documentation for any
purpose and without fee is hereby granted, provided that the above copyright notice appear in
all copies.
"""
GPL = "GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n"


@pytest.mark.parametrize(
    ("text", "spdx"),
    [
        (MIT, "MIT"),
        # Markdown: emphasis and a wrapped, quoted copy change nothing.
        ("# MIT\n\n> " + MIT.replace("free of charge", "*free of charge*"), "MIT"),
        (MIT.split("The above")[0], "MIT-0"),
        (BSD3_RST, "BSD-3-Clause"),
        (BSD2, "BSD-2-Clause"),
        (BSD4, None),  # the advertising clause: not one the project accepts unasked
        (ISC, "ISC"),
        (ZERO_BSD, "0BSD"),
        (HPND, None),
        (APACHE, "Apache-2.0"),
        (MPL, "MPL-2.0"),
        (PSF, "PSF-2.0"),
        (GPL, None),
    ],
)
def test_license_texts_are_recognised_by_their_wording(text: str, spdx: str | None) -> None:
    assert classify_license(text) == spdx


def _licensed(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str, str]:
    """The shapes repository whose fix also adds ``files`` at its top."""
    repo, base, fix = shapes_repo(tmp_path / "shapes")
    gitrepo.run(repo, "checkout", "-q", "-b", "licensed", fix)
    if files:
        fix = commit(repo, "2026-03-11T16:00:00Z", "Add the license", files)
    return repo, base, fix


def _source(repo: Path, base: str, fix: str, license_id: str | None = None) -> FixSource:
    return FixSource(
        repo=repo,
        fix=fix,
        base=base,
        repo_name="acme/shapes",
        ticket_title="area() adds the sides",
        ticket_body="area(2, 3) returns 5, it should be 6.",
        upstream="https://github.com/acme/shapes",
        license=license_id,
    )


def test_license_files_by_other_names_and_casing_are_found(tmp_path: Path) -> None:
    repo, base, fix = _licensed(
        tmp_path,
        {
            "copying.md": ISC,
            "LICENSE.rst": BSD3_RST,
            "License-APACHE": APACHE,
            "license_check.py": "print('not a license')\n",
            "LICENSES/MIT.txt": MIT,  # a directory named so is no license file
        },
    )
    found = license_at(repo, fix)
    assert [(f.name, f.spdx) for f in found] == [
        ("LICENSE.rst", "BSD-3-Clause"),
        ("License-APACHE", "Apache-2.0"),
        ("copying.md", "ISC"),
    ]
    spec = spec_from_fix("shapes-area", _source(repo, base, fix))
    assert spec.provenance is not None
    assert spec.provenance.license == "BSD-3-Clause AND Apache-2.0 AND ISC"
    # Every license file travels with the case, each under its own name.
    assert "==> LICENSE.rst <==" in spec.provenance.license_text
    assert BSD3_RST.rstrip() in spec.provenance.license_text
    assert ISC.rstrip() in spec.provenance.license_text


def test_one_license_file_is_shipped_as_it_is(tmp_path: Path) -> None:
    repo, base, fix = _licensed(tmp_path, {"LICENCE.txt": MIT})
    spec = spec_from_fix("shapes-area", _source(repo, base, fix))
    assert spec.provenance is not None
    assert (spec.provenance.license, spec.provenance.license_text) == ("MIT", MIT)


def test_license_flag_names_a_file_whose_wording_is_not_recognised(tmp_path: Path) -> None:
    repo, base, fix = _licensed(tmp_path, {"LICENSE.rst": HPND})
    with pytest.raises(InputError) as exc:
        spec_from_fix("shapes-area", _source(repo, base, fix))
    message = str(exc.value)
    assert "LICENSE.rst" in message and "not a license recognised" in message
    assert "give --license" in message
    spec = spec_from_fix("shapes-area", _source(repo, base, fix, "HPND"))
    assert spec.provenance is not None
    assert (spec.provenance.license, spec.provenance.license_text) == ("HPND", HPND)
    # A recognised file beside one that is not: the stop names only the one to read.
    repo2, base2, fix2 = _licensed(tmp_path / "two", {"LICENSE": MIT, "COPYING": GPL})
    with pytest.raises(InputError, match=r": COPYING at the fix"):
        spec_from_fix("shapes-area", _source(repo2, base2, fix2))


def test_without_a_license_file_the_stop_says_what_was_looked_for(tmp_path: Path) -> None:
    repo, base, fix = shapes_repo(tmp_path / "shapes")
    with pytest.raises(InputError) as exc:
        spec_from_fix("shapes-area", _source(repo, base, fix, "MIT"))
    assert "no license file (LICENSE*, LICENCE*, COPYING*" in str(exc.value)
    with pytest.raises(InputError, match="not an SPDX license id"):
        spec_from_fix("shapes-area", _source(repo, base, fix, "MIT; rm -rf"))


# MagicStack/immutables' LICENSE from 2021 on (sixth held-out corpus, README 13.3): a note that
# sends the reader to LICENSE-APACHE, beside it.
POINTER = """\
The Immutables project is provided under the Apache 2.0 license.  See
LICENSE-APACHE for the full text of the license.

Additionally, this software contains the following code distributed a
different license (refer to the specific files for details):

  immutables/pythoncapi_compat.h  (MIT License)
"""


def test_a_note_pointing_to_a_recognised_license_file_takes_its_license(
    tmp_path: Path,
) -> None:
    repo, base, fix = _licensed(tmp_path, {"LICENSE": POINTER, "LICENSE-APACHE": APACHE})
    found = license_at(repo, fix)
    assert [(f.name, f.spdx, f.points_to) for f in found] == [
        ("LICENSE", "Apache-2.0", "LICENSE-APACHE"),
        ("LICENSE-APACHE", "Apache-2.0", None),
    ]
    spec = spec_from_fix("shapes-area", _source(repo, base, fix))
    assert spec.provenance is not None
    assert spec.provenance.license == "Apache-2.0"
    # Both travel with the case: the note names code under another license.
    assert "==> LICENSE <==" in spec.provenance.license_text
    assert "pythoncapi_compat.h  (MIT License)" in spec.provenance.license_text


@pytest.mark.parametrize(
    "files",
    [
        # The file it names is not recognised either.
        {"LICENSE": POINTER, "LICENSE-APACHE": HPND},
        # It names no file that is there.
        {"LICENSE": POINTER.replace("LICENSE-APACHE", "LICENSE-APACHE2"), "COPYING": APACHE},
        # It names the file only as a word of its text, not as a file to see.
        {"LICENSE": "Licensed under the LICENSE-APACHE terms.\n", "LICENSE-APACHE": APACHE},
        # A long text is a license of its own, whatever it mentions.
        {"LICENSE": HPND * 12 + "See LICENSE-APACHE.\n", "LICENSE-APACHE": APACHE},
    ],
    ids=["names-unrecognised", "names-nothing-there", "mentions-only", "long-text"],
)
def test_a_note_is_no_license_unless_it_points_to_one(
    tmp_path: Path, files: dict[str, str]
) -> None:
    repo, base, fix = _licensed(tmp_path, files)
    with pytest.raises(InputError, match=r"not a license recognised"):
        spec_from_fix("shapes-area", _source(repo, base, fix))
