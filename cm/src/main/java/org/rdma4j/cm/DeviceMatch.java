// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.Inet4Address;
import java.net.InetAddress;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PortState;
import org.rdma4j.verbs.Verbs;

/**
 * Address resolution on RoCEv2: which local device, port and GID index an IP address belongs to (a GID
 * of a RoCEv2 port is an IP address of its netdev; a soft UDP device's GID 1 is its bound address).
 */
record DeviceMatch(Device device, int portNum, int gidIndex, Gid gid) {

    /**
     * Finds the GID for a connection from {@code src} (exactly that address) or, when src is null, the
     * GID of the same IP version that shares the longest prefix with {@code dst} (dst itself when it is
     * local: loopback). Null when no device fits. A resolve with no source goes through
     * {@link SourceRoute} (the host's route picks the source); the prefix is left for a wildcard dst.
     */
    static DeviceMatch find(CmEngine engine, InetAddress src, InetAddress dst) {
        DeviceMatch m = find(engine, src, dst, false);
        return m != null ? m : find(engine, src, dst, true); // a device made since the list was kept
    }

    private static DeviceMatch find(CmEngine engine, InetAddress src, InetAddress dst, boolean fresh) {
        Gid want = src == null ? null : Gid.of(src);
        Gid to = dst == null ? null : Gid.of(dst);
        boolean v4 = (src != null ? src : dst) instanceof Inet4Address;
        DeviceMatch best = null;
        int bestScore = -1;
        for (Device d : engine.devices.devicesForResolve(fresh)) {
            if (bestScore >= 1000) {
                break; // the exact source address: nothing scores higher
            }
            Context ctx;
            try {
                ctx = engine.devices.acquireContext(d);
            } catch (RuntimeException e) {
                continue; // a device we cannot open cannot carry the connection
            }
            try {
                DeviceAttr attr = ctx.queryDevice();
                for (int port = 1; port <= attr.physPortCnt(); port++) {
                    PortAttr pa = ctx.queryPort(port);
                    if (pa.state() != PortState.ACTIVE) {
                        continue;
                    }
                    for (int i = 0; i < pa.gidTblLen() && bestScore < 1000; i++) {
                        Gid g;
                        try {
                            g = ctx.queryGid(port, i);
                        } catch (RuntimeException e) {
                            continue;
                        }
                        if (g == null || g.isZero() || g.isIpv4Mapped() != v4) {
                            continue;
                        }
                        int score;
                        if (want != null) {
                            score = g.equals(want) ? 1000 : -1;
                        } else if (g.equals(to)) {
                            score = 999;
                        } else if (!v4 && g.byteAt(0) == (byte) 0xFE && (g.byteAt(1) & 0xC0) == 0x80
                                && !(to.byteAt(0) == (byte) 0xFE && (to.byteAt(1) & 0xC0) == 0x80)) {
                            score = -1; // a link-local GID does not reach a routable address
                        } else {
                            score = commonPrefixBits(g, to);
                        }
                        if (score > bestScore) {
                            bestScore = score;
                            best = new DeviceMatch(d, port, i, g);
                        }
                    }
                }
            } catch (RuntimeException e) {
                // a device that fails its queries is skipped
            } finally {
                engine.devices.releaseContext(d.name());
            }
        }
        return best;
    }

    /**
     * The first iWARP device (whose GIDs are MAC addresses, so {@link #find} never places an address on
     * it), or null. Its transport name comes from the provider (ibv_devinfo's "iWARP (1)").
     */
    static Device iwarp(CmEngine engine) {
        for (Device d : engine.devices.devicesForResolve(false)) {
            if (d.transportName().startsWith("iWARP")) {
                return d;
            }
        }
        return null;
    }

    /** Every active port of every device with a routable GID: where a wildcard listener listens. */
    static java.util.List<DeviceMatch> all(CmEngine engine) {
        java.util.List<DeviceMatch> out = new java.util.ArrayList<>();
        for (Device d : engine.devices.devicesForResolve(true)) {
            Context ctx;
            try {
                ctx = engine.devices.acquireContext(d);
            } catch (RuntimeException e) {
                continue;
            }
            try {
                for (int port = 1; port <= ctx.queryDevice().physPortCnt(); port++) {
                    PortAttr pa = ctx.queryPort(port);
                    if (pa.state() != PortState.ACTIVE) {
                        continue;
                    }
                    for (int i = 0; i < pa.gidTblLen(); i++) {
                        Gid g = ctx.queryGid(port, i);
                        if (g != null && !g.isZero()
                                && !(g.byteAt(0) == (byte) 0xFE && (g.byteAt(1) & 0xC0) == 0x80)) {
                            out.add(new DeviceMatch(d, port, i, g));
                            break;
                        }
                    }
                }
            } catch (RuntimeException e) {
                // skipped
            } finally {
                engine.devices.releaseContext(d.name());
            }
        }
        return out;
    }

    private static int commonPrefixBits(Gid a, Gid b) {
        int n = 0;
        for (int i = 0; i < Gid.LENGTH; i++) {
            int x = (a.byteAt(i) ^ b.byteAt(i)) & 0xFF;
            if (x != 0) {
                return n + Integer.numberOfLeadingZeros(x) - 24;
            }
            n += 8;
        }
        return n;
    }

    static boolean isWildcard(InetAddress a) {
        return a == null || a.isAnyLocalAddress();
    }
}
