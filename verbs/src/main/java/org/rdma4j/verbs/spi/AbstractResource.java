package org.rdma4j.verbs.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;

/**
 * Lifetime bookkeeping shared by providers: a resource records the resources it uses (its PD, CQs,
 * SRQ, MR...), each of those counts its users, and closing a resource that still has users fails with
 * EBUSY naming them. {@link #close()} is idempotent; {@link #ensureOpen()} turns use-after-close into
 * an {@link IllegalStateException}. Thread safe.
 */
public abstract class AbstractResource implements VerbsResource {
    private final Set<AbstractResource> users = ConcurrentHashMap.newKeySet();
    private final List<AbstractResource> used = new ArrayList<>(2);
    private volatile boolean closed;

    /**
     * Records that this resource uses {@code resources} (nulls ignored); call from the constructor,
     * before the provider makes anything that would outlive a failure. Each parent is claimed under
     * its own lock, the one {@link #close()} holds, so a parent closing at the same time either sees
     * this user (and refuses with EBUSY) or is closed first (and this fails with
     * IllegalStateException, having claimed nothing: the parents claimed so far are released).
     */
    protected final void uses(AbstractResource... resources) {
        try {
            for (AbstractResource r : resources) {
                if (r != null) {
                    r.claimBy(this);
                    used.add(r);
                }
            }
        } catch (RuntimeException e) {
            abandon();
            throw e;
        }
    }

    private synchronized void claimBy(AbstractResource user) {
        ensureOpen();
        users.add(user);
    }

    /** Releases the parents {@link #uses} claimed: for a constructor that fails after claiming them. */
    protected final void abandon() {
        for (AbstractResource r : used) {
            r.users.remove(this);
        }
        used.clear();
    }

    /** Moves one dependency to another (e.g. rereg of an MR to a new PD). */
    protected final synchronized void replaceUse(AbstractResource from, AbstractResource to) {
        to.claimBy(this);
        used.add(to);
        if (used.remove(from)) {
            from.users.remove(this);
        }
    }

    /** A short description for messages, e.g. "QP 0x000011". */
    protected abstract String describe();

    /** Releases the provider's state; called once, when no resource uses this one any more. */
    protected abstract void destroy();

    /** Extra reasons this resource cannot be closed now (errno != 0), e.g. unacked CQ events. */
    protected int busyReason() {
        return 0;
    }

    @Override
    public final boolean isClosed() {
        return closed;
    }

    public final void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(describe() + " is closed");
        }
    }

    /** The resources using this one, for diagnostics. */
    public final Set<AbstractResource> users() {
        return Set.copyOf(users);
    }

    @Override
    public final synchronized void close() {
        if (closed) {
            return;
        }
        if (!users.isEmpty()) {
            StringBuilder sb = new StringBuilder();
            int n = 0;
            for (AbstractResource u : users) {
                if (n++ < 4) {
                    sb.append(n > 1 ? ", " : "").append(u.describe());
                }
            }
            if (n > 4) {
                sb.append(", ... (").append(n).append(" in all)");
            }
            throw new VerbsException(Errno.EBUSY, describe() + " is still in use by " + sb);
        }
        int busy = busyReason();
        if (busy != 0) {
            throw new VerbsException(busy, describe() + " cannot be destroyed now");
        }
        destroy();
        closed = true;
        for (AbstractResource r : used) {
            r.users.remove(this);
        }
        used.clear();
    }

    @Override
    public String toString() {
        return describe() + (closed ? " (closed)" : "");
    }
}
