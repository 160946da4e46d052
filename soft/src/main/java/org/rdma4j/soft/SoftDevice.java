// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Function;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.Link;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;

/**
 * A soft RoCEv2 device: a pure-Java HCA whose packets leave through a {@link Link} (the in-process
 * fabric, a fault-injecting wrapper, or later UDP). Create extra devices with {@link SoftDevices}.
 * Thread safe.
 */
public final class SoftDevice implements Device {
    private final String name;
    final Hca hca;
    /** Open contexts: port events go to each of them. */
    private final Set<SoftContext> contexts = ConcurrentHashMap.newKeySet();
    final ResourceLimits limits;
    /** Live objects per {@link ResourceLimits.Kind}, over all contexts (rxe's pools are per device). */
    private final AtomicIntegerArray counts = new AtomicIntegerArray(ResourceLimits.Kind.values().length);
    private boolean removed;

    SoftDevice(String name, long guid, Gid[] gids, Function<Hca, Link> linkFactory) {
        this(name, guid, gids, linkFactory, ResourceLimits.RXE);
    }

    SoftDevice(String name, long guid, Gid[] gids, Function<Hca, Link> linkFactory, ResourceLimits limits) {
        this(name, guid, gids, linkFactory, limits, null);
    }

    /**
     * With a {@code clock} (tests) the device reads the time from it and runs no progress thread: the
     * caller drives {@code hca.progressAgent()}. Null: the system clock and a progress thread.
     */
    SoftDevice(String name, long guid, Gid[] gids, Function<Hca, Link> linkFactory, ResourceLimits limits,
               org.rdma4j.soft.agent.NanoClock clock) {
        this.name = name;
        this.limits = limits;
        this.hca = clock == null ? new Hca(name, guid, gids) : new Hca(name, guid, gids, clock, false);
        try {
            hca.setLink(linkFactory.apply(hca));
        } catch (RuntimeException e) {
            hca.close();
            throw e;
        }
        SoftLog.deviceUp(name, hca);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long guid() {
        return hca.guid;
    }

    @Override
    public String provider() {
        return "soft";
    }

    /** The GID at {@code index} of port 1, or null. */
    public Gid gid(int index) {
        return hca.gid(index);
    }

    @Override
    public synchronized Context open() {
        if (removed) {
            throw new VerbsException(Errno.ENODEV, name + " has been removed");
        }
        SoftContext c = new SoftContext(this);
        contexts.add(c);
        return c;
    }

    void contextClosed(SoftContext c) {
        contexts.remove(c);
    }

    /** Refuses (EBUSY) while a context is open; otherwise no context can be opened any more. */
    synchronized void markRemoved() {
        if (!contexts.isEmpty()) {
            throw new VerbsException(Errno.EBUSY, name + " has " + contexts.size() + " open context(s)");
        }
        removed = true;
        SoftLog.removed(name);
    }

    /** Takes one of the device's {@code kind} objects; EINVAL one past the limit (as rxe's pools). */
    void claim(ResourceLimits.Kind kind) {
        int max = limits.max(kind);
        if (counts.incrementAndGet(kind.ordinal()) > max) {
            counts.decrementAndGet(kind.ordinal());
            throw new VerbsException(Errno.EINVAL, name + " holds its maximum of " + max + " " + kind + "s (max_"
                    + kind.name().toLowerCase() + ")");
        }
    }

    /**
     * Takes one of the device's {@code kind} objects ({@link #claim(ResourceLimits.Kind)}), then runs
     * {@code uses} (a constructor's claim of its parents); gives the object back if that fails.
     */
    void claim(ResourceLimits.Kind kind, Runnable uses) {
        claim(kind);
        try {
            uses.run();
        } catch (RuntimeException e) {
            release(kind);
            throw e;
        }
    }

    void release(ResourceLimits.Kind kind) {
        counts.decrementAndGet(kind.ordinal());
    }

    /**
     * Port 1 up or down, as rxe follows its netdev's carrier: the state changes, every open context
     * gets PORT_ACTIVE or PORT_ERR, and going down counts link_downed. No change, no event.
     */
    synchronized void setPortUp(boolean up) {
        if (!hca.setPortUp(up)) {
            return;
        }
        SoftLog.portState(name, up);
        AsyncEvent e = AsyncEvent.ofPort(up ? AsyncEventType.PORT_ACTIVE : AsyncEventType.PORT_ERR, 1);
        for (SoftContext c : contexts) {
            c.postEvent(e);
        }
    }

    void close() {
        hca.close();
    }

    @Override
    public String toString() {
        return "soft device " + name;
    }
}
