// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.verbs.Access;

/**
 * The responder's checks of RDMA WRITE and of packet lengths, one copy for every way a request
 * reaches it: a packet from a link, a burst of packets on the in-process fabric, or a one-packet
 * message handed over without a packet ({@link PacketInfo}, {@link Path#handOver}). A rule added here
 * holds on all of them; {@code PathEquivalenceTest} runs the data-path cases over both paths. rxe's
 * check_rkey and check_length (rxe_resp.c). Runs only inside the QP task.
 */
final class WriteChecks {
    /** {@link #writeStart}'s verdict when the WRITE may go on (an AETH NAK code is never negative). */
    static final int OK = -1;

    private final QpEngine qp;
    /** The key {@link #writeStart} found good, or null for a WRITE of zero bytes. */
    private MemKey key;
    /**
     * The key an rkey named last: a run of WRITEs to one region checks it without the table. Used
     * only while it still carries that rkey and passes the check; otherwise the table decides (a key
     * deregistered and its number given to a new region fails the check: invalid).
     */
    private MemKey lastKey;

    WriteChecks(QpEngine qp) {
        this.qp = qp;
    }

    /** The QP was reset: forget the last key. */
    void reset() {
        lastKey = null;
        key = null;
    }

    /**
     * The checks of a WRITE's first packet: remote write allowed on the QP, the DMA length within
     * 2^31, and the rkey good for [va, va + length) with remote write (no key for zero bytes).
     * Returns {@link #OK} with the key in {@link #key()}, else the NAK code the packet gets.
     */
    int writeStart(long va, long length, int rkey) {
        key = null;
        if (!remoteWriteAllowed() || length > Responder.MAX_DMA_BYTES) {
            return Aeth.NAK_INVALID_REQUEST;
        }
        if (length > 0) {
            key = remoteKey(rkey, va, length, Access.REMOTE_WRITE);
            if (key == null) {
                return Aeth.NAK_REMOTE_ACCESS;
            }
        }
        return OK;
    }

    /** Whether the QP allows remote writes (its access flags). */
    boolean remoteWriteAllowed() {
        return (qp.accessFlags & Access.REMOTE_WRITE) != 0;
    }

    /** The key the last {@link #writeStart} that answered {@link #OK} found (null for zero bytes). */
    MemKey key() {
        return key;
    }

    /**
     * The length checks of WRITE packets: the last packet's length as its place in the message
     * demands ({@code lastLen} of a packet of {@link PacketInfo#kind} {@code lastKind}; packets before
     * it in a burst are MTU-sized by construction), {@code len} bytes in all within what the WRITE has
     * left, and all of it on the message's last packet. For one packet, {@code lastLen == len}.
     */
    boolean lengthOk(int lastKind, int lastLen, int len, long remaining) {
        return sizeOk(lastKind, lastLen) && len <= remaining && ((lastKind & PacketInfo.END) == 0 || len == remaining);
    }

    /**
     * A request packet's payload length for its place in a message ({@link PacketInfo#kind}
     * {@code kind}): FIRST and MIDDLE exactly the path MTU, LAST between 1 and the MTU, ONLY at most
     * the MTU.
     */
    boolean sizeOk(int kind, int len) {
        int mtu = qp.mtuBytes;
        if ((kind & PacketInfo.FULL) != 0) {
            return len == mtu;
        }
        if ((kind & PacketInfo.LAST) != 0) {
            return len > 0 && len <= mtu;
        }
        return len <= mtu;
    }

    /**
     * The key {@code rkey} names if it lets this QP use [va, va + length) with {@code accessBit}
     * ({@link MemKey#check}, remote use), else null; {@link #writeStart}'s key check.
     */
    MemKey remoteKey(int rkey, long va, long length, int accessBit) {
        MemKey k = lastKey;
        if (k != null && k.key == rkey
                && MemKey.check(k, MemKey.Use.REMOTE, qp.pd, va, length, accessBit, qp) == KeyVerdict.OK) {
            return k;
        }
        k = qp.hca.keys.lookup(rkey);
        lastKey = k;
        return MemKey.check(k, MemKey.Use.REMOTE, qp.pd, va, length, accessBit, qp) == KeyVerdict.OK ? k : null;
    }
}
