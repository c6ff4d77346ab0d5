"""Certificates a client under a clock frozen at T accepts.

mitmproxy dates its CA and the certificates it mints from two days before *now*; a sandbox
whose clock reads T (months or years earlier) then sees every certificate as not yet valid.
The gateway's CA and leaf certificates are therefore valid from :data:`VALID_FROM`, long
before any T a case can have, until mitmproxy's usual expiry after now.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from mitmproxy import certs

VALID_FROM = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
BASENAME = "mitmproxy"


def ensure_ca(confdir: Path, key_size: int = 2048) -> None:
    """Write the gateway's CA where mitmproxy looks for it, unless one is there already."""
    ca_file = confdir / f"{BASENAME}-ca.pem"
    if ca_file.exists():
        return
    confdir.mkdir(parents=True, exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=key_size)
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "replay gateway"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "replay"),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(VALID_FROM)
        .not_valid_after(now + certs.CA_EXPIRY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    secret = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    ca_file.write_bytes(secret + pem)
    ca_file.chmod(0o600)
    (confdir / f"{BASENAME}-ca-cert.pem").write_bytes(pem)
    (confdir / f"{BASENAME}-dhparam.pem").write_bytes(certs.DEFAULT_DHPARAM)


_original_dummy_cert = certs.dummy_cert


def _backdated_dummy_cert(privkey: Any, cacert: Any, *args: Any, **kwargs: Any) -> certs.Cert:
    """mitmproxy's leaf certificate, re-issued valid from :data:`VALID_FROM`."""
    minted = _original_dummy_cert(privkey, cacert, *args, **kwargs)
    original = x509.load_pem_x509_certificate(minted.to_pem())
    builder = (
        x509.CertificateBuilder()
        .subject_name(original.subject)
        .issuer_name(original.issuer)
        .public_key(original.public_key())
        .serial_number(original.serial_number)
        .not_valid_before(VALID_FROM)
        .not_valid_after(original.not_valid_after_utc)
    )
    for extension in original.extensions:
        builder = builder.add_extension(extension.value, critical=extension.critical)
    return certs.Cert(builder.sign(privkey, hashes.SHA256()))


def backdate_minted_certificates() -> None:
    """Make mitmproxy mint leaf certificates through :func:`_backdated_dummy_cert`."""
    certs.dummy_cert = _backdated_dummy_cert  # type: ignore[assignment]
