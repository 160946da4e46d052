// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.verbs.WrOpcode;

/**
 * How the requester asks for a long RDMA READ: in consecutive READ requests of at most
 * {@value #REQUEST_PACKETS} response packets each (the last one shorter), each sent when no more than
 * {@value #WINDOW} response PSNs would be in flight with it and a responder resource is free (each
 * request holds one of the responder's max_dest_rd_atomic resources until its last response arrives).
 * The responder so never
 * has more than {@value #WINDOW} responses to send at once. A responder that sends a whole READ's
 * responses back to back (rxe does: an 8 MiB READ is 2048 packets) overruns what lies between it and
 * this device (a veth's backlog, a socket's receive buffer), and every lost tail then costs an ACK
 * timeout. On the wire each piece is an ordinary READ request whose PSNs and data continue the
 * previous one's, as a retransmission from the middle of a READ is; each piece's responses end with
 * RDMA READ RESPONSE LAST (or ONLY). Pure arithmetic over the send queue; called inside the QP task.
 */
final class ReadPieces {
    /** Most response packets one READ request asks for: a send window's worth. */
    static final int REQUEST_PACKETS = Requester.WINDOW_PSNS;
    /**
     * Most READ response PSNs in flight: four pieces (2 MiB at MTU 4096), so that the responder always
     * has the next pieces' requests in hand while this device takes in the current one, and still half
     * of what was lost first between rxe and a soft device in the interop VM (the tail beyond about
     * 1000 packets of one burst: a veth's backlog holds 1000).
     */
    static final int WINDOW = 4 * REQUEST_PACKETS;

    private ReadPieces() {
    }

    /** Response packets of a READ of {@code length} bytes at path MTU {@code mtu}. */
    static int packets(long length, int mtu) {
        return (int) Math.max(1, (length + mtu - 1) / mtu);
    }

    /**
     * How many response packets the READ request of {@code w} that starts at its packet {@code index}
     * asks for: to the end of that piece, or of the READ.
     */
    static int requestPackets(SendWqe w, int index, int mtu) {
        int pieceEnd = (index / REQUEST_PACKETS + 1) * REQUEST_PACKETS;
        return Math.min(pieceEnd, packets(w.totalLength, mtu)) - index;
    }

    /** Whether {@code packets} PSNs from {@code from} stay within {@link #WINDOW} of the last acknowledged. */
    static boolean fits(QpEngine qp, int from, int packets) {
        return Psn.diff(Psn.add(from, packets), Psn.add(qp.completer.lastAckedPsn(), 1)) <= WINDOW;
    }

    /**
     * Whether the READ request of {@code w} for its packets from {@code index} on, at PSN {@code from},
     * may go now, with {@code outstanding} READ requests and atomics unanswered.
     */
    static boolean mayGo(QpEngine qp, SendWqe w, int from, int index, int outstanding) {
        return outstanding < Math.max(1, qp.maxRdAtomic) && fits(qp, from, requestPackets(w, index, qp.mtuBytes));
    }

    /** {@link #mayGo} for the next piece of {@code w}, a READ being sent. */
    static boolean nextMayGo(QpEngine qp, SendWqe w, int outstanding) {
        return mayGo(qp, w, w.nextPsn, Psn.diff(w.nextPsn, w.firstPsn), outstanding);
    }

    /**
     * Writes the RETH (at {@code rethAt} of {@code b}) of the READ request of {@code w} that asks for its
     * next piece, from its next PSN to the end of that piece, and moves {@code w} past it.
     */
    static void writeRequest(SendWqe w, MemorySegment b, long rethAt, int mtu) {
        int index = Psn.diff(w.nextPsn, w.firstPsn);
        int n = requestPackets(w, index, mtu);
        long offset = (long) index * mtu;
        Reth.writeAt(b, rethAt, w.remoteAddr + offset, w.rkey,
                (int) (Math.min(w.totalLength, offset + (long) n * mtu) - offset));
        w.nextPsn = Psn.add(w.nextPsn, n);
        w.sent = Psn.compare(w.nextPsn, w.lastPsn) > 0;
    }

    /**
     * Where a rewind to {@code toPsn} inside the READ {@code w} asks again from: {@code toPsn}, but never
     * past the first response not yet received. A PSN sequence error NAK names the responder's expected
     * PSN, which is a later piece's first PSN when that piece's request was lost; a response of an
     * earlier piece may still be missing then, and moving past it would complete the READ without
     * its data.
     */
    static int resumeAt(SendWqe w, int toPsn) {
        return Psn.compare(toPsn, w.respPsn) > 0 ? w.respPsn : toPsn;
    }

    /** Whether response packet {@code index} of a READ of {@code packets} packets ends a request. */
    static boolean endsRequest(int index, int packets) {
        return index == packets - 1 || index % REQUEST_PACKETS == REQUEST_PACKETS - 1;
    }

    /**
     * A rewind to the request at {@code found}, with the cursor at {@code end} before it: the READs after
     * it are asked for again from their first response not yet received. Returns the READ requests and
     * atomics unanswered before {@code found} (see {@link #unansweredBefore}).
     */
    static int rewound(SendQueue sq, long found, long end) {
        for (long i = found + 1; i < end; i++) {
            SendWqe x = sq.at(i);
            if (x.started && !x.done && x.opcode == WrOpcode.RDMA_READ) {
                x.nextPsn = x.respPsn;
                x.sent = false;
            }
        }
        return unansweredBefore(sq, found);
    }

    /**
     * After a rewind to the request at {@code found}: the READ requests and atomics before it that are
     * sent and not answered in full (what is at or after {@code found} is sent again and counted then).
     */
    static int unansweredBefore(SendQueue sq, long found) {
        int n = 0;
        for (long i = sq.tail(); i < found; i++) {
            SendWqe x = sq.at(i);
            if (!x.started || x.done) {
                continue;
            }
            if (x.opcode.isAtomic()) {
                n++;
            } else if (x.opcode == WrOpcode.RDMA_READ) {
                int from = Psn.diff(x.respPsn, x.firstPsn);
                int to = Psn.diff(x.nextPsn, x.firstPsn); // requested up to here
                if (to > from) {
                    n += (to - 1) / REQUEST_PACKETS - from / REQUEST_PACKETS + 1;
                }
            }
        }
        return n;
    }
}
