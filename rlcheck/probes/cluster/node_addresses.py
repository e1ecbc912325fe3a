"""Each node's Ray address judged as an address the other nodes must reach (catalogue: rollout-engines-unreachable).

SLIME gives every engine, the router and the weight-update group the address Ray reports for the node
(ray.util.get_node_ip_address, the node's NodeManagerAddress in the GCS): the router and the trainers on other
nodes dial it. An address only its own host can use (loopback, 0.0.0.0), one two hosts both claim (containers on
Docker's default bridge, 172.17.0.x on every host), link-local 169.254/16 or fe80::/10, or a family the other
nodes do not speak ends in a router with "no available workers" or an update group that never forms. Pure:
reads the fan-out's node list (what Ray's GCS says), no traffic.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict

from rlcheck import catalog
from rlcheck.cluster.fanout_result import FanoutResult, NodeFacts
from rlcheck.probes.cluster.cluster_reach import REACH_REMEDY
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "rollout-engines-unreachable"
DOCKER_BRIDGE = ipaddress.ip_network("172.17.0.0/16")
"""Docker's default bridge subnet: each host numbers its own containers from it."""
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse(address: str) -> IpAddress | None:
    """The IP of a node address ('10.0.0.1', '[fe80::1]', '10.0.0.1:6379'), None for a host name."""
    text = address.strip().strip("[]")
    for candidate in (text, text.rsplit(":", 1)[0].strip("[]")):
        try:
            return ipaddress.ip_address(candidate.split("%", 1)[0])
        except ValueError:
            continue
    return None


def _problems(nodes: list[NodeFacts]) -> tuple[list[str], list[str]]:
    """(faults that stop traffic, doubts rlcheck cannot settle) over the alive nodes' addresses."""
    ips = {n.node_id: parse(n.address) for n in nodes}
    faults: list[str] = []
    doubts = [f"{n.where}: '{n.address}' is a host name (every node must resolve it alike)"
              for n in nodes if ips[n.node_id] is None]
    known = [(n, ip) for n in nodes if (ip := ips[n.node_id]) is not None]
    if all(ip.is_loopback for _, ip in known) and len({n.hostname for n in nodes}) <= 1:
        return faults, doubts  # one host (a local multi-node Ray): loopback reaches every node
    for node, ip in known:
        if ip.is_loopback or ip.is_unspecified:
            faults.append(f"{node.where}: {ip} reaches only its own host")
        elif ip.is_link_local:
            doubts.append(f"{node.where}: {ip} is link-local (not routed beyond its segment)")
        elif ip in DOCKER_BRIDGE:
            doubts.append(f"{node.where}: {ip} is in Docker's default bridge 172.17.0.0/16 (the host's own "
                          "container network; use host networking)")
    by_ip: defaultdict[IpAddress, list[NodeFacts]] = defaultdict(list)
    for node, ip in known:
        by_ip[ip].append(node)
    for ip, same in by_ip.items():
        if len({n.hostname for n in same}) > 1 and not ip.is_loopback:
            faults.append(f"{ip} is claimed by {len(same)} nodes ({', '.join(n.hostname for n in same)}): traffic "
                          "for all of them goes to one")
    families = {ip.version for _, ip in known}
    if len(families) > 1:
        faults.append("nodes mix IPv4 and IPv6 addresses: " + ", ".join(f"{n.hostname} {ip}" for n, ip in known))
    return faults, doubts


def evaluate_node_addresses(result: FanoutResult) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    if not result.connected:
        return Verdict(**base, status=Status.UNKNOWN, remedy=REACH_REMEDY, details=f"tried: {result.tried}",
                       summary=f"Ray at {result.address} not reached: {result.error}")
    nodes = [a.node for a in result.nodes]
    if not nodes:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"Ray at {result.address} listed no alive node")
    listed = ", ".join(f"{n.hostname} {n.address}" for n in nodes)
    faults, doubts = _problems(nodes)
    remedy = catalog.get(FAILURE_ID).remedy
    if faults:
        return Verdict(**base, status=Status.FAIL, remedy=remedy, details=f"nodes: {listed}",
                       summary="node addresses the other nodes cannot reach: " + "; ".join(faults + doubts))
    if doubts and len(nodes) > 1:
        return Verdict(**base, status=Status.WARN, remedy=remedy, details=f"nodes: {listed}",
                       summary="node addresses rlcheck cannot vouch for: " + "; ".join(doubts))
    one = " (one node: nothing else dials it)" if len(nodes) == 1 else ""
    return Verdict(**base, status=Status.PASS, details=f"nodes: {listed}",
                   summary=f"{len(nodes)} node address(es), one family, distinct, routable{one}")
