package org.rdma4j.soft;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.Link;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;

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

    SoftDevice(String name, long guid, Gid[] gids, Function<Hca, Link> linkFactory) {
        this.name = name;
        this.hca = new Hca(name, guid, gids);
        try {
            hca.setLink(linkFactory.apply(hca));
        } catch (RuntimeException e) {
            hca.close();
            throw e;
        }
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
    public Context open() {
        SoftContext c = new SoftContext(this);
        contexts.add(c);
        return c;
    }

    void contextClosed(SoftContext c) {
        contexts.remove(c);
    }

    /**
     * Port 1 up or down, as rxe follows its netdev's carrier: the state changes, every open context
     * gets PORT_ACTIVE or PORT_ERR, and going down counts link_downed. No change, no event.
     */
    synchronized void setPortUp(boolean up) {
        if (!hca.setPortUp(up)) {
            return;
        }
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
