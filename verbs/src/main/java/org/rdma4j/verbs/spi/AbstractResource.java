// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.Arrays;
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
    /** A resource that uses nothing yet; a subclass constructor calls {@link #uses} for its parents. */
    public AbstractResource() {
    }

    private static final AbstractResource[] NONE = {};
    /** Created by the first claim: most resources of a large table (QPs) are never used by another. */
    private volatile Set<AbstractResource> users;
    /** What this resource uses, exactly sized (a QP holds thousands of times over: no list, no spare room). */
    private AbstractResource[] used = NONE;
    private volatile boolean closed;

    /**
     * Records that this resource uses {@code resources} (nulls ignored); call from the constructor,
     * before the provider makes anything that would outlive a failure. Each parent is claimed under
     * its own lock, the one {@link #close()} holds, so a parent closing at the same time either sees
     * this user (and refuses with EBUSY) or is closed first (and this fails with
     * IllegalStateException, having claimed nothing: the parents claimed so far are released).
     *
     * @param resources the parents this resource uses (a PD, CQs, an SRQ, ...); nulls are ignored
     * @throws IllegalStateException if a parent is closed
     */
    protected final void uses(AbstractResource... resources) {
        try {
            for (AbstractResource r : resources) {
                if (r != null) {
                    r.claimBy(this);
                    addUsed(r);
                }
            }
        } catch (RuntimeException e) {
            abandon();
            throw e;
        }
    }

    private synchronized void claimBy(AbstractResource user) {
        ensureOpen();
        Set<AbstractResource> u = users;
        if (u == null) {
            u = ConcurrentHashMap.newKeySet();
            users = u;
        }
        u.add(user);
    }

    private void addUsed(AbstractResource r) {
        AbstractResource[] a = Arrays.copyOf(used, used.length + 1);
        a[a.length - 1] = r;
        used = a;
    }

    /** Drops {@code r}'s record that this resource uses it (r's users set exists: this claimed it). */
    private void unclaim(AbstractResource r) {
        Set<AbstractResource> u = r.users;
        if (u != null) {
            u.remove(this);
        }
    }

    /** Releases the parents {@link #uses} claimed: for a constructor that fails after claiming them. */
    protected final void abandon() {
        for (AbstractResource r : used) {
            unclaim(r);
        }
        used = NONE;
    }

    /**
     * Moves one dependency to another (e.g. rereg of an MR to a new PD).
     *
     * @param from the parent used so far
     * @param to   the parent used from now on
     * @throws IllegalStateException if {@code to} is closed (nothing changes then)
     */
    protected final synchronized void replaceUse(AbstractResource from, AbstractResource to) {
        to.claimBy(this);
        addUsed(to);
        for (int i = 0; i < used.length; i++) {
            if (used[i] == from) {
                AbstractResource[] a = new AbstractResource[used.length - 1];
                System.arraycopy(used, 0, a, 0, i);
                System.arraycopy(used, i + 1, a, i, a.length - i);
                used = a;
                unclaim(from);
                break;
            }
        }
    }

    /** {@return a short description for messages, e.g. "QP 0x000011"} */
    protected abstract String describe();

    /** Releases the provider's state; called once, when no resource uses this one any more. */
    protected abstract void destroy();

    /**
     * Extra reasons this resource cannot be closed now, e.g. unacknowledged CQ events; called by
     * {@link #close()} under the resource's lock, after the check for users.
     *
     * @return 0 when it can be closed (the default), else the errno close throws (EBUSY)
     */
    protected int busyReason() {
        return 0;
    }

    @Override
    public final boolean isClosed() {
        return closed;
    }

    /**
     * Refuses use after close: call at the start of every operation.
     *
     * @throws IllegalStateException naming the resource once it is closed
     */
    public final void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(describe() + " is closed");
        }
    }

    /** {@return a snapshot of the resources using this one, for diagnostics} */
    public final Set<AbstractResource> users() {
        Set<AbstractResource> u = users;
        return u == null ? Set.of() : Set.copyOf(u);
    }

    @Override
    public final synchronized void close() {
        if (closed) {
            return;
        }
        Set<AbstractResource> us = users;
        if (us != null && !us.isEmpty()) {
            StringBuilder sb = new StringBuilder();
            int n = 0;
            for (AbstractResource u : us) {
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
            unclaim(r);
        }
        used = NONE;
    }

    @Override
    public String toString() {
        return describe() + (closed ? " (closed)" : "");
    }
}
