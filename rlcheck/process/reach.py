"""Is anything listening at a Ray address? Told in a second, before a client waits out its deadline.

`ray.init("ray://127.0.0.1:1")` retries a refused connection until its timeout and then says only
that it did not return; a plain TCP connect says "connection refused" at once. Only definite answers
(refused, no route, unknown host) are reported; a slow answer is left to the real client's deadline.
"""

from __future__ import annotations

import errno
import re
import socket
import urllib.parse

DEFAULT_PORTS = {"ray": 10001, "http": 80, "https": 443}
_DEFINITE = {errno.ECONNREFUSED: "connection refused (nothing listens there)",
             errno.EHOSTUNREACH: "no route to host", errno.ENETUNREACH: "network unreachable"}
_NETLOC = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>[^/?#]*))?")


class AddressError(ValueError):
    """An address that names no host and port; the message says what is allowed."""


def host_port(address: str) -> tuple[str, int]:
    """(host, port) of ray://HOST:PORT, http(s)://HOST:PORT or a GCS HOST:PORT; AddressError when malformed."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "", address
    netloc = urllib.parse.urlsplit(f"//{rest}").netloc
    match = _NETLOC.fullmatch(netloc)
    if not match:
        raise AddressError(f"{address!r}: no host in it")
    port_text = match.group("port")
    if port_text is None:
        if scheme not in DEFAULT_PORTS:
            raise AddressError(f"{address!r}: a port is needed (HOST:PORT)")
        return match.group("host").strip("[]"), DEFAULT_PORTS[scheme]
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise AddressError(f"{address!r}: port {port_text!r} is not a number from 1 to 65535")
    return match.group("host").strip("[]"), int(port_text)


def refused(address: str, timeout_s: float = 3.0) -> str:
    """What a TCP connect to the address said when it was a definite no; '' when it connected or was slow."""
    try:
        host, port = host_port(address)
    except AddressError as exc:
        return str(exc)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return ""
    except socket.gaierror as exc:
        return f"{host}: host name not found ({exc.strerror})"
    except TimeoutError:
        return ""
    except OSError as exc:
        said = _DEFINITE.get(exc.errno or 0)
        return f"{host}:{port}: {said}" if said else ""
