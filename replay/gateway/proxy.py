"""Running one gateway: a snapshot's fakes, registry and docs in-process behind mitmproxy,
embedded in asyncio.

``replay world up`` calls :func:`serve_forever`; once the proxy listens it writes the state
file (address, CA bundle, the environment a client needs) that ``replay world env`` reads.
The runner starts, resets and stops that process as one :class:`replay.world.World`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from mitmproxy import options
from mitmproxy.addons import (
    block,
    core,
    disable_h2c,
    dns_resolver,
    errorcheck,
    next_layer,
    proxyserver,
    strip_dns_https_records,
    tlsconfig,
)
from mitmproxy.master import Master

from fakes.core import build_world
from fakes.core.server import CONTROL_PREFIX, control_app
from replay.base.case import load_case
from replay.base.errors import ReplayError
from replay.docs import DocsCache, docs_app
from replay.gateway.addons import addons
from replay.gateway.certs import backdate_minted_certificates, ensure_ca
from replay.gateway.config import CREDENTIALS, GatewayConfig, Route, client_env
from replay.gateway.dispatch import GatewayMaster
from replay.gateway.gate import Gate
from replay.gateway.hostile import safe_data, safe_text
from replay.gateway.typecheck import fast_message_typecheck
from replay.gateway.unparsed import record_unparsed
from replay.registry.serve import Registry, registry_app
from replay.snapshot import load_snapshot

CA_FILE = "mitmproxy-ca-cert.pem"


class GatewayError(ReplayError):
    """The gateway could not start."""


def real_secrets(environ: dict[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """The runner's model credentials, as headers per model host. Never shown to the agent."""
    env = os.environ if environ is None else environ
    found: dict[str, tuple[str, str]] = {}
    for host, (header, template, names) in CREDENTIALS.items():
        for name in names:
            if env.get(name):
                found[host] = (header, template.format(env[name]))
                break
    return found


def build_gate(config: GatewayConfig) -> Gate:
    """The snapshot's fakes, its registry and docs caches, and their routes: what the gateway
    serves. (The fakes share one database and clock, the fakes' own world.)"""
    snapshot = load_snapshot(config.snapshot)
    humans = load_case(config.case).humans if config.case else []
    fakes = build_world(snapshot, config.services, db_url=config.events_db, humans=humans)
    docs = DocsCache.from_snapshot(snapshot)

    def docs_miss(service: str, kind: str, url: str, data: dict[str, Any]) -> None:
        with fakes.world.session() as s:
            fakes.world.events.record(
                s,
                service=service,
                kind=kind,
                actor=None,
                object_type="page",
                # The URL is the agent's to choose: written so that any bytes can be recorded.
                object_id=safe_text(url),
                data=safe_data(data),
            )

    apps: dict[Route, Any] = {
        # The fakes alone: the control plane is not in what the proxy serves at all.
        "fake": fakes.router,
        "registry": registry_app(Registry.from_snapshot(snapshot)),
        "docs": docs_app(docs, docs_miss),
    }
    return Gate(config, fakes.world, apps, frozenset(fakes.routes), docs.hosts)


async def serve_forever(config: GatewayConfig) -> None:
    """Start the proxy, write the state file, and run until SIGINT or SIGTERM."""
    gate = build_gate(config)
    config.confdir.mkdir(parents=True, exist_ok=True)
    # Certificates valid from long before T, for sandboxes whose clock is frozen there.
    ensure_ca(config.confdir)
    backdate_minted_certificates()
    # The same type check of each request and response, without re-reading the annotations.
    fast_message_typecheck()
    opts = options.Options(
        listen_host=config.listen_host, listen_port=config.listen_port, confdir=str(config.confdir)
    )
    master = _master(opts)
    master.options.update(  # type: ignore[no-untyped-call]
        # No connection upstream unless a request really goes there (the model route), and
        # no peeking at upstream certificates to mint ours.
        connection_strategy="lazy",
        upstream_cert=False,
        # No request body is ever streamed: mitmproxy connects upstream for a streamed body
        # before the `request` hook, so a body past this limit is refused (413) before any
        # connection, on every route. The model route streams its answers itself.
        body_size_limit="64m",
        # Trust for an HTTPS --model-upstream with its own CA (a test's server).
        **(
            {"ssl_verify_upstream_trusted_ca": str(config.model_upstream_ca)}
            if config.model_upstream_ca
            else {}
        ),
    )
    master.addons.add(*addons(gate, real_secrets()))  # type: ignore[no-untyped-call]
    # What mitmproxy refuses before any addon hook (an unparsable request line) is recorded too.
    record_unparsed(gate)
    # The control plane (events, state, reset) is served to the runner on a Unix socket
    # beside the state file, never through the proxy.
    control_sock = config.state_file.with_name(config.state_file.stem + ".control.sock")
    control_sock.unlink(missing_ok=True)
    app = control_app(gate.world)
    proxyserver: Any = master.addons.get("proxyserver")  # type: ignore[no-untyped-call]

    @app.get(f"{CONTROL_PREFIX}/connections")
    def connections() -> dict[str, int]:
        # Client connections still open: a connection leaves this map only once its hooks
        # (a model call's record included) have run, so 0 means the traffic so far is logged.
        return {"open": len(proxyserver.connections)}

    control = _EmbeddedServer(
        uvicorn.Config(app, uds=str(control_sock), log_level="warning", lifespan="off")
    )
    control_task = asyncio.create_task(control.serve())
    runner = asyncio.create_task(master.run())
    loop = asyncio.get_running_loop()

    def stop() -> None:
        control.should_exit = True
        master.shutdown()  # type: ignore[no-untyped-call]

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    try:
        address = await _listening(master, runner)
        _write_state(config, address, gate, control_sock)
        await runner
    finally:
        control.should_exit = True
        await control_task
        config.state_file.unlink(missing_ok=True)
        control_sock.unlink(missing_ok=True)


def _master(opts: options.Options) -> Master:
    """mitmproxy with only the addons the gateway runs on (in mitmdump's order).

    mitmdump loads some thirty more (playback, map/modify, save, HAR, sticky cookies, proxy
    auth, scripts, anticache, onboarding at mitm.it...), every one off with our options, yet
    each is offered every event of every flow: on a request served in-process that walk was
    the largest part of the gateway's own time. Kept: the core options and checks,
    ``block`` (no clients from global addresses), DNS HTTPS-record stripping, the h2c
    refusal, the proxy server, DNS resolution, protocol detection, TLS, and the startup error
    check. (mitm.it's pages are gone with ``onboarding``: that host is denied like any other.)
    """
    master = GatewayMaster(opts)
    master.addons.add(  # type: ignore[no-untyped-call]
        core.Core(),
        block.Block(),
        strip_dns_https_records.StripDnsHttpsRecords(),
        disable_h2c.DisableH2C(),
        proxyserver.Proxyserver(),  # type: ignore[no-untyped-call]
        dns_resolver.DnsResolver(),
        next_layer.NextLayer(),
        tlsconfig.TlsConfig(),
        errorcheck.ErrorCheck(),
    )
    return master


class _EmbeddedServer(uvicorn.Server):
    """uvicorn inside our loop: the gateway owns the signal handlers, not uvicorn."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _listening(master: Master, runner: asyncio.Task[None]) -> tuple[str, int]:
    proxyserver: Any = master.addons.get("proxyserver")  # type: ignore[no-untyped-call]
    for _ in range(400):
        if runner.done():
            runner.result()
            raise GatewayError("the proxy stopped before it listened")
        addrs = proxyserver.listen_addrs() if proxyserver.is_running else []
        if addrs:
            host, port = addrs[0][0], addrs[0][1]
            return str(host), int(port)
        await asyncio.sleep(0.025)
    raise GatewayError("the proxy did not start listening within 10 s")


def _write_state(
    config: GatewayConfig, address: tuple[str, int], gate: Gate, control_sock: Path
) -> None:
    host, port = address
    proxy_url = f"http://{host}:{port}"
    ca = config.confdir / CA_FILE
    env = client_env(proxy_url, ca)
    state: dict[str, Any] = {
        "proxy": proxy_url,
        "pid": os.getpid(),
        "ca_bundle": str(ca),
        "control": str(control_sock),
        "snapshot": str(config.snapshot),
        "at": gate.world.snapshot.at.isoformat(),
        "fake_hosts": sorted(gate.fake_hosts),
        "model_hosts": list(config.model_hosts),
        "env": env,
    }
    tmp = config.state_file.with_suffix(".tmp")
    config.state_file.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(state, indent=2) + "\n")
    tmp.replace(config.state_file)
    # What a client needs, for the person who started the world (also: replay world env).
    lines = [
        f"# world at T {state['at']}: {', '.join(sorted(gate.fake_hosts))}",
        f"# proxy {proxy_url}   CA bundle {ca}   control plane unix:{control_sock}",
        f"# state {config.state_file}",
        *(f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items())),
    ]
    print("\n".join(lines), flush=True)
