"""The agent's own sandbox: who it runs as, and what of the machinery it can rewrite.

A run's sandbox (as :func:`replay.run.runner.run_once` configures it) must not run the agent
as root, and the agent must not be able to rewrite what carries its traffic or trust (the
bridge's directory, the CA bundle, the resolver) nor plant interpreter start-up hooks in the
system's Python (``sitecustomize``, ``.pth``) that every later process of the run would load.
Each write is attempted as the sandbox's default user, whatever that is, and must fail and
leave the target as it was. (Local writes reach no gateway: they are shown refused by the
file's state, not by an event.)
"""

from __future__ import annotations

import pytest

from tests.redteam.conftest import Agent


def test_the_agent_is_not_root(agent: Agent) -> None:
    assert agent.uid() != 0
    caps = agent.sh("grep CapEff /proc/self/status").out.split()
    assert caps[-1] == "0000000000000000", caps


TARGETS = {
    "bridge-socket-dir": "/run/replay/planted",
    "bridge-forwarder": "/run/replay/forward.py",
    "ca-bundle": "/etc/ssl/certs/ca-certificates.crt",
    "resolver": "/etc/resolv.conf",
    "hosts": "/etc/hosts",
    "system-sitecustomize": "/usr/lib/python3.11/sitecustomize.py",
    "system-pth": "/usr/lib/python3/dist-packages/zz-redteam.pth",
    "local-site-packages-pth": "/usr/local/lib/python3.11/dist-packages/zz-redteam.pth",
    "git-system-config": "/etc/gitconfig",
}


@pytest.mark.parametrize("target", list(TARGETS))
def test_the_agent_cannot_rewrite_the_machinery(target: str, agent: Agent) -> None:
    path = TARGETS[target]
    before = agent.sh(f"sha256sum {path} 2>/dev/null || echo absent").out
    wrote = agent.sh(
        f"mkdir -p $(dirname {path}) 2>/dev/null; printf 'import os  # redteam\\n' >> {path}"
    )
    after = agent.sh(f"sha256sum {path} 2>/dev/null || echo absent").out
    assert wrote.exit_code != 0, f"uid {agent.uid()} wrote {path}"
    assert after == before, f"{path} changed"
