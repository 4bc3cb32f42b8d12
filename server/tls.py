"""TLS on the MySQL port (fe.conf `enable_ssl`): the server's certificate and key from fe.conf
(`mysql_ssl_default_server_certificate`, `mysql_ssl_default_server_key`), or a self-signed pair made on the first
start in `<storage root>/tls/` (the `cryptography` package writes it; the standard library's `ssl` serves it).
`require_secure_transport` refuses logins that did not upgrade."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed(directory: Path, host: str) -> tuple[Path, Path]:
    """(certificate, key) in `directory`, made once: an EC P-256 key and a ten-year certificate for `host`."""
    cert_path, key_path = directory / "server-cert.pem", directory / "server-key.pem"
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dorislite")])
    now = dt.datetime.now(dt.UTC)
    alt: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        address = ipaddress.ip_address(host)
        if str(address) != "127.0.0.1":
            alt.append(x509.IPAddress(address))
    except ValueError:
        alt.append(x509.DNSName(host))
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .sign(key, hashes.SHA256()))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert), str(key))
    return context
