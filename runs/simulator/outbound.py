"""The outbound policy for `http(s)://` responders (DESIGN §13, issue 33).

The bot under test is untrusted, and so is whoever types its URL into the Start run form: the
lab must not become a way into the network it runs in. A responder may point at a public
address; a private, loopback, link-local, multicast, unspecified, reserved or cloud metadata
address only when QALAB_RESPONDER_ALLOWED_HOSTS lists the host's name or a network holding the
address.

Checked twice: on every address the name resolves to when a run is created
(`responder_refusal`), and again when the lab connects (`connect`: resolve, check every address,
connect to a checked one), so a name that points elsewhere by the time a turn is played (DNS
rebinding) is refused, and nothing is sent.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

SETTING = "QALAB_RESPONDER_ALLOWED_HOSTS"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# Cloud instance metadata services (AWS, GCP, Azure, OpenStack; AWS over IPv6; Alibaba).
METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)
AddrInfo = tuple[Any, ...]  # socket.getaddrinfo's (family, type, proto, canonname, sockaddr)


class OutboundRefused(Exception):
    """The responder's host points where the lab may not call; the message says why and how to
    allow it."""


@dataclass(frozen=True)
class AllowList:
    hosts: frozenset[str]
    networks: tuple[IPNetwork, ...]

    def allows_host(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.hosts

    def allows_address(self, address: IPAddress) -> bool:
        return any(address.version == n.version and address in n for n in self.networks)


@functools.lru_cache(maxsize=8)
def _allow_list(items: tuple[str, ...]) -> AllowList:
    hosts, networks = set(), []
    for item in items:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            hosts.add(item.lower().rstrip("."))
    return AllowList(frozenset(hosts), tuple(networks))


def allow_list() -> AllowList:
    """The allow-list of the settings (validated by `qalab.env.envhosts`)."""
    from django.conf import settings

    return _allow_list(tuple(getattr(settings, SETTING, ()) or ()))


def address_kind(address: IPAddress) -> str | None:
    """What makes `address` non-public ("loopback", "private", ...), or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA:
        return "cloud metadata"
    for kind, flag in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
    ):
        if flag:
            return kind
    return None if address.is_global else "non-public"


def resolve(host: str, port: int) -> list[AddrInfo]:
    """Every TCP address of `host` (tests replace this to play DNS rebinding)."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)


def refusal(host: str, infos: list[AddrInfo], allowed: AllowList) -> str | None:
    """Why the lab may not call `host` at these resolved addresses (None: it may)."""
    if allowed.allows_host(host):
        return None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        kind = address_kind(address)
        if kind and not allowed.allows_address(address):
            shown = host if host == str(address) else f"{host} ({address})"
            return (
                f"responder host {shown} is a {kind} address: the lab calls public addresses "
                f"only, unless the host name or a network holding the address is listed in "
                f"{SETTING}"
            )
    return None


def responder_refusal(spec: str) -> str | None:
    """Why a run may not be created for the http(s) responder `spec` (None: it may; other
    kinds of spec are not this policy's business). Resolves the host name now."""
    if not spec.strip().startswith(("http://", "https://")):
        return None
    try:
        parsed = urlsplit(spec.strip())
        host, port = parsed.hostname or "", parsed.port or 0
    except ValueError:
        return None  # not a usable URL: the adapter says so
    if not host:
        return None
    allowed = allow_list()
    if allowed.allows_host(host):
        return None
    try:
        infos = resolve(host, port or (443 if parsed.scheme == "https" else 80))
    except (OSError, UnicodeError):
        return f"responder host {host} could not be resolved"
    return refusal(host, infos, allowed)


def connect(
    address: tuple[str, int], timeout: float | None = None, source_address: Any = None
) -> socket.socket:
    """A TCP connection to `address` (host, port), made only to an address the policy allows:
    resolved here, every address checked, then connected to one of those very addresses (the
    signature of `socket.create_connection`, so `http.client` can use it). OutboundRefused when
    the host points where the lab may not call; OSError when no connection could be made."""
    host, port = address
    infos = resolve(host, port)
    problem = refusal(host, infos, allow_list())
    if problem:
        raise OutboundRefused(problem)
    last: OSError = OSError(f"{host} has no address")
    for family, kind, proto, _, sockaddr in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            last = exc
        else:
            return sock
    raise last
