// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.verbs.Gid;

/**
 * The in-process fabric: devices in one JVM attach their GIDs and packets go straight to the
 * receiving device's sink on the sending thread, payload passed as slices of the source memory (the
 * receiver's copy into the target is the only copy). Thread safe.
 */
public final class LoopbackFabric {
    private static final LoopbackFabric DEFAULT = new LoopbackFabric();

    private final Map<Gid, PacketSink> routes = new ConcurrentHashMap<>();
    /** Multicast groups: the sinks (devices) that joined each, as arrays read without locks. */
    private final Map<Gid, PacketSink[]> groups = new ConcurrentHashMap<>();
    /** Copies of multicast packets for all members but the last (who gets the original). */
    private final PacketPool copies = new PacketPool();
    private final AtomicLong dropped = new AtomicLong();
    /** Advances whenever a device attaches or detaches: every {@link Route} resolved before is stale. */
    private final java.util.concurrent.atomic.AtomicInteger epoch = new java.util.concurrent.atomic.AtomicInteger();

    /** The fabric the default devices share. */
    public static LoopbackFabric defaultFabric() {
        return DEFAULT;
    }

    /** Attaches a device owning {@code gids}; packets to those GIDs go to {@code sink}. */
    public Link attach(PacketSink sink, Gid... gids) {
        for (Gid g : gids) {
            if (routes.putIfAbsent(g, sink) != null) {
                for (Gid done : gids) {
                    if (done.equals(g)) {
                        break;
                    }
                    routes.remove(done, sink);
                }
                throw new IllegalArgumentException("GID " + g + " is already on this fabric");
            }
        }
        epoch.incrementAndGet();
        return new DirectLink() {
            @Override
            public Route resolve(Gid dst) {
                int e = epoch.get();
                PacketSink to = dst == null || dst.isMulticast() ? null : routes.get(dst);
                return to == null ? null : new Route(LoopbackFabric.this, e, to);
            }

            @Override
            public void send(Packet packet) {
                if (packet.dstGid != null && packet.dstGid.isMulticast()) {
                    multicast(packet);
                    return;
                }
                PacketSink to = routes.get(packet.dstGid);
                if (to == null) {
                    dropped.incrementAndGet();
                    packet.release();
                    return;
                }
                to.receive(packet);
            }

            @Override
            public long dropped() {
                return dropped.get();
            }

            @Override
            public void joinGroup(Gid group) {
                groups.compute(group, (g, members) -> {
                    if (members == null) {
                        return new PacketSink[] {sink};
                    }
                    for (PacketSink m : members) {
                        if (m == sink) {
                            return members;
                        }
                    }
                    PacketSink[] more = java.util.Arrays.copyOf(members, members.length + 1);
                    more[members.length] = sink;
                    return more;
                });
            }

            @Override
            public void leaveGroup(Gid group) {
                groups.computeIfPresent(group, (g, members) -> {
                    PacketSink[] fewer = java.util.Arrays.stream(members).filter(m -> m != sink)
                            .toArray(PacketSink[]::new);
                    return fewer.length == 0 ? null : fewer;
                });
            }

            @Override
            public void close() {
                for (Gid g : gids) {
                    routes.remove(g, sink);
                }
                epoch.incrementAndGet();
                for (Gid g : groups.keySet()) {
                    leaveGroup(g);
                }
            }
        };
    }

    /** Delivers a multicast packet to every device that joined its group (the sender's own included). */
    private void multicast(Packet packet) {
        PacketSink[] members = groups.get(packet.dstGid);
        if (members == null || members.length == 0) {
            dropped.incrementAndGet();
            packet.release();
            return;
        }
        packet.materialize();
        for (int i = 0; i < members.length - 1; i++) {
            members[i].receive(packet.copyTo(copies.acquire()));
        }
        members[members.length - 1].receive(packet);
    }

    int epoch() {
        return epoch.get();
    }

    /** True if some device owns {@code gid}. */
    public boolean isAttached(Gid gid) {
        return routes.containsKey(gid);
    }
}
