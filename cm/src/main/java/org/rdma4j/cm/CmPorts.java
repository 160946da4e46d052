// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.rdma4j.cm.CmId.State;

/**
 * The ids by port space and port, as cma.c keeps its bind lists: binding a port (a free ephemeral one
 * for port 0), giving it back, and finding the listener a request's service id and destination address
 * name. Guarded by the engine's lock.
 */
final class CmPorts {
    private static final int EPHEMERAL_LOW = 32768;
    private static final int EPHEMERAL_HIGH = 60999;

    private final Map<Long, List<CmId>> ports = new HashMap<>();
    private int nextPort = EPHEMERAL_LOW + ThreadLocalRandom.current().nextInt(EPHEMERAL_HIGH - EPHEMERAL_LOW);

    private static long portKey(PortSpace ps, int port) {
        return (long) ps.value() << 16 | port;
    }

    /** Binds {@code id} to {@code port} (0: a free ephemeral one) of {@code addr}; EADDRINUSE when taken. */
    void bind(CmId id, InetAddress addr, int port) {
        if (port == 0) {
            for (int i = 0; i <= EPHEMERAL_HIGH - EPHEMERAL_LOW; i++) {
                int p = nextPort++;
                if (nextPort > EPHEMERAL_HIGH) {
                    nextPort = EPHEMERAL_LOW;
                }
                if (!ports.containsKey(portKey(id.ps, p))) {
                    port = p;
                    break;
                }
            }
            if (port == 0) {
                throw CmWords.portInUse(addr, 0, id.ps, null);
            }
        } else {
            for (CmId other : ports.getOrDefault(portKey(id.ps, port), List.of())) {
                InetAddress o = other.local.getAddress();
                if (DeviceMatch.isWildcard(o) || DeviceMatch.isWildcard(addr) || o.equals(addr)) {
                    throw CmWords.portInUse(addr, port, id.ps, other.local);
                }
            }
        }
        ports.computeIfAbsent(portKey(id.ps, port), k -> new ArrayList<>()).add(id);
        id.ownsPortBinding = true;
        id.local = new InetSocketAddress(addr, port);
    }

    /** Gives back the port {@code id} bound, if it bound one. */
    void unbind(CmId id) {
        if (id.ownsPortBinding) {
            id.ownsPortBinding = false;
            long key = portKey(id.ps, id.local.getPort());
            List<CmId> l = ports.get(key);
            if (l != null) {
                l.remove(id);
                if (l.isEmpty()) {
                    ports.remove(key);
                }
            }
        }
    }

    /** {@return the listener on {@code port} of port space {@code ps} for {@code dst}: its own, else a wildcard one, else null} */
    CmId findListener(int ps, int port, InetAddress dst) {
        CmId wildcard = null;
        for (PortSpace s : PortSpace.values()) {
            if (s.value() != ps) {
                continue;
            }
            for (CmId l : ports.getOrDefault(portKey(s, port), List.of())) {
                if (l.state != State.LISTEN) {
                    continue;
                }
                InetAddress la = l.local.getAddress();
                if (DeviceMatch.isWildcard(la)) {
                    wildcard = l;
                } else if (la.equals(dst)) {
                    return l;
                }
            }
        }
        return wildcard;
    }
}
