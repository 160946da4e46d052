package org.rdma4j.soft.link;

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
    private final AtomicLong dropped = new AtomicLong();

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
        return new Link() {
            @Override
            public void send(Packet packet) {
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
            public void close() {
                for (Gid g : gids) {
                    routes.remove(g, sink);
                }
            }
        };
    }

    /** True if some device owns {@code gid}. */
    public boolean isAttached(Gid gid) {
        return routes.containsKey(gid);
    }
}
