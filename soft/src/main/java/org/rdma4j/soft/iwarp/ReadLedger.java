// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

/**
 * The RDMA Reads of one connection in flight, both ways, against the IRD and ORD negotiated in MPA:
 * the outbound Read Requests that wait for their Read Response (siw's ORQ: the sender adds, the
 * receiver matches each Read Response against the oldest and retires it), and the count of inbound Read
 * Requests not yet answered (siw's IRQ: the receiver accepts, the sender's finished Read Response
 * answers).
 *
 * <p>Each field has one writer: the sender thread writes {@code outPut} and {@code inAnswered}, the
 * receiver thread {@code outGet} and {@code inAccepted}; the volatile counters publish the entries, so
 * the sender and the receiver may run on two threads. Allocation-free after construction.
 */
public final class ReadLedger {
    private final int ird;
    private final int ord;
    private final int[] sinkStag;
    private final long[] sinkOffset;
    private final int[] size;
    private final long[] token;
    private volatile long outPut;
    private volatile long outGet;
    private volatile long inAccepted;
    private volatile long inAnswered;

    /**
     * Creates a ledger.
     *
     * @param ird inbound Read Requests this side accepts at once (the IRD it announced), 0 or more
     * @param ord outbound Read Requests this side may have in flight (the ORD agreed), 0 or more
     */
    public ReadLedger(int ird, int ord) {
        if (ird < 0 || ord < 0) {
            throw new IllegalArgumentException("IRD " + ird + " and ORD " + ord + " must not be negative");
        }
        this.ird = ird;
        this.ord = ord;
        this.sinkStag = new int[Math.max(1, ord)];
        this.sinkOffset = new long[sinkStag.length];
        this.size = new int[sinkStag.length];
        this.token = new long[sinkStag.length];
    }

    /** {@return the negotiated IRD} */
    public int ird() {
        return ird;
    }

    /** {@return the negotiated ORD} */
    public int ord() {
        return ord;
    }

    /**
     * Records an outbound Read Request before it is sent (sender thread).
     *
     * @return false when ORD requests are already in flight: the caller waits (siw fences the SQ)
     */
    boolean addOutbound(int stag, long offset, int bytes, long callerToken) {
        long put = outPut;
        if (put - outGet >= ord) {
            return false;
        }
        int i = (int) (put % sinkStag.length);
        sinkStag[i] = stag;
        sinkOffset[i] = offset;
        size[i] = bytes;
        token[i] = callerToken;
        outPut = put + 1;
        return true;
    }

    /** {@return how many outbound Read Requests wait for their response} */
    public int outboundInFlight() {
        return (int) (outPut - outGet);
    }

    boolean hasOutbound() {
        return outPut != outGet;
    }

    int oldestSinkStag() {
        return sinkStag[(int) (outGet % sinkStag.length)];
    }

    long oldestSinkOffset() {
        return sinkOffset[(int) (outGet % sinkStag.length)];
    }

    long oldestSize() {
        return Integer.toUnsignedLong(size[(int) (outGet % sinkStag.length)]);
    }

    long oldestToken() {
        return token[(int) (outGet % sinkStag.length)];
    }

    /** Retires the oldest outbound Read Request (receiver thread, its response complete). */
    void retireOutbound() {
        outGet = outGet + 1;
    }

    /**
     * Accepts an inbound Read Request (receiver thread).
     *
     * @return false when IRD requests are already unanswered
     */
    boolean acceptInbound() {
        long accepted = inAccepted;
        if (accepted - inAnswered >= ird) {
            return false;
        }
        inAccepted = accepted + 1;
        return true;
    }

    /** Counts an inbound Read Request as answered: its Read Response is fully written (sender thread). */
    void answerInbound() {
        inAnswered = inAnswered + 1;
    }

    /** {@return how many inbound Read Requests are accepted and not yet answered} */
    public int inboundUnanswered() {
        return (int) (inAccepted - inAnswered);
    }
}
