// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;

/**
 * What every provider's {@link Context} shares: the refusal of a closed context (IllegalStateException)
 * before a PD, completion channel or event poller is made, and {@link #queryGid} as the GID of
 * {@link #queryGidEntry}. A provider supplies the making ({@link #newPd}, {@link #newChannel},
 * {@link #newEventPoller}) and the rest of {@link Context}. Thread safe.
 */
public abstract class AbstractContext extends AbstractResource implements Context {
    /** A context; the subclass opens the device. */
    protected AbstractContext() {
    }

    @Override
    public final Gid queryGid(int portNum, int index) {
        return queryGidEntry(portNum, index).gid();
    }

    @Override
    public final ProtectionDomain allocPd() {
        ensureOpen();
        return newPd();
    }

    @Override
    public final CompletionChannel createCompletionChannel() {
        ensureOpen();
        return newChannel();
    }

    @Override
    public final EventPoller createEventPoller() {
        ensureOpen();
        return newEventPoller();
    }

    /** {@return a new PD of this context, which {@link #allocPd} has found open} */
    protected abstract ProtectionDomain newPd();

    /** {@return a new completion channel of this context, which {@link #createCompletionChannel} has found open} */
    protected abstract CompletionChannel newChannel();

    /** {@return a new event poller, for {@link #createEventPoller} on an open context} */
    protected abstract EventPoller newEventPoller();
}
