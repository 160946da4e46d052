// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.engine.Gsi;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractResource;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * QP1 of a soft device's port, as {@link SoftContext#openGsi} opened it: one per device at a time
 * (across contexts); it keeps its context open (closing the context first fails with EBUSY). The queue,
 * the checks and the packets are the device's {@link Gsi}. Thread safe: senders on any threads, one
 * receiver at a time.
 */
final class SoftGsiPort extends AbstractResource implements GsiPort {
    private final SoftContext context;
    private final Gsi gsi;
    private final int token;
    private final Gid gid;

    /** Takes over the open {@code token} of {@code gsi}; closes it if it cannot be made. */
    SoftGsiPort(SoftContext context, Gsi gsi, int token, Gid gid) {
        this.context = context;
        this.gsi = gsi;
        this.token = token;
        this.gid = gid;
        try {
            uses(context);
        } catch (RuntimeException e) {
            gsi.close(token);
            throw e;
        }
    }

    @Override
    protected String describe() {
        return "QP1 of " + context.device.name() + " port 1";
    }

    @Override
    protected void destroy() {
        gsi.close(token); // wakes a waiting receiver (EBADF)
    }

    @Override
    public int portNum() {
        return 1;
    }

    @Override
    public Gid localGid() {
        return gid;
    }

    private void checkOpen() {
        if (isClosed()) {
            throw new VerbsException(Errno.EBADF, describe() + " is closed");
        }
    }

    private static void checkMad(MemorySegment mad) {
        if (mad == null || mad.byteSize() < MAD_SIZE) {
            throw new VerbsException(Errno.EINVAL, "a MAD needs " + MAD_SIZE + " bytes, not "
                    + (mad == null ? "null" : mad.byteSize()));
        }
    }

    @Override
    public void send(MemorySegment mad, Gid dest, int pkey) {
        checkOpen();
        checkMad(mad);
        if (dest == null) {
            throw new VerbsException(Errno.EINVAL, "no destination GID");
        }
        if ((pkey & ~0xFFFF) != 0) {
            throw new VerbsException(Errno.EINVAL, "P_Key 0x" + Integer.toHexString(pkey) + " is not 16 bits");
        }
        gsi.send(mad, gid, dest, pkey);
    }

    @Override
    public boolean receive(MemorySegment mad, Source from, long timeoutNanos) {
        checkOpen();
        checkMad(mad);
        if (from == null) {
            throw new VerbsException(Errno.EINVAL, "no Source to fill");
        }
        if (mad.isReadOnly()) {
            throw new VerbsException(Errno.EINVAL, "the MAD segment is read-only");
        }
        return gsi.take(token, mad, from, timeoutNanos);
    }

    @Override
    public String toString() {
        return describe() + " (GID " + gid + ")";
    }
}
