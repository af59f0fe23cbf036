"""Addresses: node pod CIDRs, pod IPs from them, Service ClusterIPs, and what a client sees.

- Node IPAM (pkg/controller/nodeipam/ipam/range_allocator.go AllocateOrOccupyCIDR with
  cidrset.go AllocateNext): each new node gets the next free /24 of the cluster CIDR, round-robin
  (``--cluster-cidr``, here 10.244.0.0/16 as flannel's default manifest uses) in ``spec.podCIDR``.
- Pod IPs: the CNI plugin on the node hands out addresses from that /24. The reference
  ``host-local`` IPAM plugin (containernetworking/plugins plugins/ipam/host-local/backend/allocator
  allocator.go Get) continues after the last address it reserved and skips the network address and
  the gateway (.1), so a replacement pod gets a *new* address, not the one just freed.
- ClusterIPs: the API server's allocator (pkg/registry/core/service/ipallocator bitmap.go
  AllocateNext) picks a free address of ``--service-cluster-ip-range`` at random (kubeadm's default
  10.96.0.0/12; .1 goes to the ``kubernetes`` Service). The address lives as long as the Service.
"""
from __future__ import annotations

import ipaddress
import random

from engines.core.errors import ValidationError

CLUSTER_CIDR = ipaddress.ip_network("10.244.0.0/16")
NODE_MASK = 24                                          # --node-cidr-mask-size (IPv4 default 24)
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
RESERVED_SERVICE_IPS = 1                                # 10.96.0.1: the kubernetes Service


def parse_cidr(value: object, field: str) -> ipaddress.IPv4Network:
    """An IPv4 CIDR such as 10.244.1.0/24, refused with the field named when it is not one."""
    try:
        net = ipaddress.ip_network(str(value), strict=True)
    except ValueError:
        raise ValidationError(field, f"{value!r} is not a CIDR", "an IPv4 network, e.g. 10.244.1.0/24") from None
    if net.version != 4 or net.num_addresses < 4:
        raise ValidationError(field, f"{value} is too small or not IPv4", "an IPv4 network of at least /30")
    return net


class NodeIpam:
    """The node IPAM controller's range allocator: one /24 per node, lowest free first."""

    def __init__(self) -> None:
        self.used: dict[str, ipaddress.IPv4Network] = {}
        self._count = 2 ** (NODE_MASK - CLUSTER_CIDR.prefixlen)
        self._next = 0                                   # cidrset.go nextCandidate

    def occupy(self, node: str, cidr: str) -> ipaddress.IPv4Network:
        """A node that arrives with a podCIDR keeps it (AllocateOrOccupyCIDR: occupy)."""
        net = parse_cidr(cidr, "spec.podCIDR")
        self.used[node] = net
        return net

    def allocate(self, node: str) -> ipaddress.IPv4Network:
        if node in self.used:
            return self.used[node]
        taken = set(self.used.values())
        size = 2 ** (32 - NODE_MASK)
        for i in range(self._count):   # cidrset.go AllocateNext: round-robin from the last block handed out
            k = (self._next + i) % self._count
            net = ipaddress.ip_network((int(CLUSTER_CIDR.network_address) + k * size, NODE_MASK))
            if net not in taken:
                self.used[node] = net
                self._next = (k + 1) % self._count
                return net
        raise ValidationError("spec.podCIDR", f"the cluster CIDR {CLUSTER_CIDR} has no free /{NODE_MASK} left")

    def release(self, node: str) -> None:
        self.used.pop(node, None)


class HostLocal:
    """One node's host-local IPAM: next address after the last reserved, wrapping round."""

    def __init__(self, cidr: ipaddress.IPv4Network) -> None:
        self.cidr = cidr
        hosts = list(cidr.hosts())
        self.pool = [str(ip) for ip in hosts[1:]]        # hosts[0] (.1) is the bridge gateway
        self.in_use: set[str] = set()
        self.last = -1

    def get(self) -> str:
        """The next free address, or "" when the range is exhausted (the sandbox then gets none)."""
        n = len(self.pool)
        for step in range(1, n + 1):
            i = (self.last + step) % n
            if self.pool[i] not in self.in_use:
                self.last = i
                self.in_use.add(self.pool[i])
                return self.pool[i]
        return ""

    def take(self, ip: str) -> bool:
        """Reserve a requested address (a pod replayed from a dump keeps its IP) if it is free here."""
        if ip in self.in_use or ip not in self.pool:
            return False
        self.in_use.add(ip)
        return True

    def release(self, ip: str) -> None:
        self.in_use.discard(ip)


class ServiceIps:
    """Random ClusterIP allocation from the service range (its own seeded generator, so it never
    shifts the scheduler's tie-break draws)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"clusterip-{seed}")
        self.in_use: set[str] = set()

    def allocate(self, wanted: str | None = None, check_range: bool = True) -> str:
        """A random free address, or ``wanted`` (spec.clusterIP given); ``check_range=False`` for
        a dump from a cluster whose service range is its own."""
        if wanted:
            try:
                ip = ipaddress.ip_address(wanted)
            except ValueError:
                raise ValidationError("spec.clusterIP", f"{wanted!r} is not an IP address",
                                      f"an address in {SERVICE_CIDR}, or leave it empty") from None
            if check_range and ip not in SERVICE_CIDR:
                raise ValidationError("spec.clusterIP", f"{wanted} is not in the service range {SERVICE_CIDR}",
                                      f"an address in {SERVICE_CIDR}, or leave it empty")
            if wanted in self.in_use:
                raise ValidationError("spec.clusterIP", f"provided IP {wanted} is already allocated")
            self.in_use.add(wanted)
            return wanted
        size = SERVICE_CIDR.num_addresses
        while True:
            offset = self.rng.randrange(RESERVED_SERVICE_IPS + 1, size - 1)
            ip = str(SERVICE_CIDR.network_address + offset)
            if ip not in self.in_use:
                self.in_use.add(ip)
                return ip

    def release(self, ip: str | None) -> None:
        self.in_use.discard(ip or "")


def client_view(frame, service: str, pinned_ip: str | None = None) -> list[str]:
    """What a client sees at this frame: connecting by the Service name (DNS → ClusterIP → one ready
    endpoint, chosen by kube-proxy) against connecting to a pod IP copied down earlier.

    ``frame`` is an ``engines.k8s.scenarios.Frame``; ``pinned_ip`` a pod address the client kept
    (None: the first ready endpoint's address at this frame, as a client would copy it)."""
    svc = next((s for s in frame.services if s["name"] == service), None)
    if svc is None:
        return [f"No Service named {service} at t = {frame.t:.0f} s."]
    ready = [e for e in svc.get("endpoints", []) if e["ready"]]
    port = (svc.get("ports") or [{}])[0]
    head = (f"<b>By the Service name</b> {service} → DNS answers the ClusterIP <b>{svc.get('cluster_ip', '?')}</b>:"
            f"{port.get('port', '?')}, fixed while the Service exists: ")
    lines = [head + (f"<b>works</b> ({len(ready)} ready endpoint(s))." if ready else
                     "<b>refused</b>: the EndpointSlice has no ready endpoint (the name is right; nothing is ready).")]
    pods = {p.get("ip"): p for p in frame.pods if p.get("ip") and p["active"]}
    ip = pinned_ip or (ready[0]["ip"] if ready else None)
    if ip:
        owner = pods.get(ip)
        if owner is None:
            verdict = "no pod has this address any more: <b>the connection times out</b>."
        elif all(owner["labels"].get(k) == v for k, v in svc["selector"].items()):
            verdict = f"pod {owner['name']} has it now and answers" + ("." if owner["ready"] else ", though it is not Ready.")
        else:
            verdict = f"pod {owner['name']} has it now, a pod the Service does not select: the wrong program answers."
        lines.append(f"<b>By a hard-coded pod IP</b> {ip}: {verdict}")
    if ready:
        lines.append("kube-proxy sends each new connection to one ready endpoint of the EndpointSlice: "
                     + ", ".join(e["ip"] for e in ready) + ".")
    lines.append("Every new pod gets a fresh address from its node's pod CIDR, so a replacement or a rescheduled pod "
                 "answers elsewhere; clients should use the Service name.")
    return lines
