// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.ValueLayout;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.AtomicEth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.verbs.Access;

/**
 * The responder's RDMA READ and atomic requests (rxe_resp.c's read_reply and atomic execution, and
 * its duplicate_request for them): each executed request is remembered in one of max_dest_rd_atomic
 * {@link Resource}s, so that a duplicate is answered from it (a READ replayed from memory, an atomic
 * with its saved original value) and never executed twice. Methods return {@link #DONE} or the NAK
 * syndrome the {@link Responder} must answer with. Runs only inside the QP task.
 */
final class ReadAtomicResponder {
    /** The request was answered (or, for a duplicate, dropped); no NAK. */
    static final int DONE = 0;

    private final QpEngine qp;
    private final Acknowledger acks;
    private final Resource.Ring resources = new Resource.Ring();
    /** PSNs the last executed request took: the expected PSN moves past them. */
    private int spanned;

    ReadAtomicResponder(QpEngine qp, Acknowledger acks) {
        this.qp = qp;
        this.acks = acks;
    }

    /** modify(MAX_DEST_RD_ATOMIC). */
    void resize(int n) {
        resources.resize(n);
    }

    void clear() {
        resources.clear();
    }

    /** How many PSNs the request last executed took (a READ one per response packet, an atomic one). */
    int spannedPsns() {
        return spanned;
    }

    /**
     * Executes an RDMA READ request: checks it, remembers it, sends its responses. Returns
     * {@link #DONE} or the NAK to answer it with (the responder then fails the QP).
     */
    int read(Packet p, int op, int psn) {
        // no responder resources (max_dest_rd_atomic 0) is an invalid request, as rxe answers it
        if ((qp.accessFlags & Access.REMOTE_READ) == 0 || qp.maxDestRdAtomic == 0) {
            return Aeth.NAK_INVALID_REQUEST;
        }
        long at = Opcode.offsetOf(op, Opcode.HEADER_RETH);
        long va = Reth.virtualAddressAt(p.buffer, at);
        long length = Integer.toUnsignedLong(Reth.dmaLengthAt(p.buffer, at));
        int rkey = Reth.rkeyAt(p.buffer, at);
        if (length > Responder.MAX_DMA_BYTES) {
            return Aeth.NAK_INVALID_REQUEST;
        }
        MemKey k = null;
        if (length > 0) {
            k = MemKey.remote(qp.hca.keys, rkey, qp, va, length, Access.REMOTE_READ);
            if (k == null) {
                return Aeth.NAK_REMOTE_ACCESS;
            }
        }
        int packets = (int) Math.max(1, (length + qp.mtuBytes - 1) / qp.mtuBytes);
        Resource r = resources.next();
        r.atomic = false;
        r.firstPsn = psn;
        r.lastPsn = Psn.add(psn, packets - 1);
        r.rkey = rkey;
        r.va = va;
        r.length = length;
        r.valid = true;
        acks.messageDone();
        spanned = packets;
        acks.readResponses(k, va, length, psn, true);
        return DONE;
    }

    /** Executes an atomic request, as {@link #read}. */
    int atomic(Packet p, int op, int psn) {
        if ((qp.accessFlags & Access.REMOTE_ATOMIC) == 0 || qp.maxDestRdAtomic == 0) {
            return Aeth.NAK_INVALID_REQUEST;
        }
        long at = Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ETH);
        long va = AtomicEth.virtualAddressAt(p.buffer, at);
        // the rkey first, then the alignment (rxe's order: a bad key is an access error either way)
        MemKey k = MemKey.remote(qp.hca.keys, AtomicEth.rkeyAt(p.buffer, at), qp, va, 8, Access.REMOTE_ATOMIC);
        if (k == null) {
            return Aeth.NAK_REMOTE_ACCESS;
        }
        if ((va & 7) != 0) {
            return Aeth.NAK_INVALID_REQUEST;
        }
        long off = k.offsetOf(va);
        long original;
        try {
            synchronized (qp.hca.atomicLock) {
                original = k.segment.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
                if (op == Opcode.RC_COMPARE_SWAP) {
                    if (original == AtomicEth.compareAt(p.buffer, at)) {
                        k.segment.set(ValueLayout.JAVA_LONG_UNALIGNED, off, AtomicEth.swapAddAt(p.buffer, at));
                    }
                } else {
                    k.segment.set(ValueLayout.JAVA_LONG_UNALIGNED, off, original + AtomicEth.swapAddAt(p.buffer, at));
                }
            }
        } catch (IllegalStateException e) {
            return Aeth.NAK_REMOTE_ACCESS; // the target was freed under the registration
        }
        Resource r = resources.next();
        r.atomic = true;
        r.firstPsn = psn;
        r.lastPsn = psn;
        r.originalValue = original;
        r.valid = true;
        acks.messageDone();
        spanned = 1;
        acks.atomicAck(psn, original);
        return DONE;
    }

    /** A duplicate READ or atomic: answered again from its resource; a READ's memory is checked again. */
    int duplicate(Packet p, int op, int psn) {
        Resource r = Opcode.isRead(op) ? resources.readContaining(psn) : resources.atomicAt(psn);
        if (r == null) {
            return DONE; // no longer remembered: dropped, as rxe does
        }
        if (!Opcode.isRead(op)) {
            acks.atomicAck(psn, r.originalValue);
            return DONE;
        }
        // Replayed from memory (the data may have changed since: RDMA READ semantics allow it).
        long at = Opcode.offsetOf(op, Opcode.HEADER_RETH);
        long va = Reth.virtualAddressAt(p.buffer, at);
        long length = Integer.toUnsignedLong(Reth.dmaLengthAt(p.buffer, at));
        int rkey = Reth.rkeyAt(p.buffer, at);
        // only the original request or a part of it is a duplicate (as rxe); anything else is dropped
        if (rkey != r.rkey || Long.compareUnsigned(va, r.va) < 0 || length > r.length
                || Long.compareUnsigned(va - r.va, r.length - length) > 0) {
            return DONE;
        }
        MemKey k = null;
        if (length > 0) {
            k = MemKey.remote(qp.hca.keys, rkey, qp, va, length, Access.REMOTE_READ);
            if (k == null) {
                return Aeth.NAK_REMOTE_ACCESS; // gone since the first answer (deregistered, freed): rxe rechecks
            }
        }
        // a request from the middle of the original is answered from the middle: MIDDLE/LAST
        acks.readResponses(k, va, length, psn, psn == r.firstPsn);
        return DONE;
    }
}
