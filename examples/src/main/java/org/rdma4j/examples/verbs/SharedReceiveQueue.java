// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.verbs;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rdma4j.verbs.*;

/**
 * Several RC senders into one shared receive queue: the receiver's QPs take their receives from one
 * SRQ of {@value #DEPTH} buffers. The SRQ is armed with a limit ({@code ibv_modify_srq} with
 * {@code srq_limit}, {@code IBV_SRQ_LIMIT}); when fewer receives than that remain the device raises
 * {@code IBV_EVENT_SRQ_LIMIT_REACHED} once and disarms it, and the receiver reposts the buffers it
 * has consumed and re-arms. The senders post more messages than the SRQ holds: a message that finds
 * it empty is refused with an RNR NAK and retried (rnr_retry 7: for ever) until a receive is there.
 */
public final class SharedReceiveQueue {
    static final int SENDERS = 3;
    static final int MESSAGES = 20;               // per sender
    static final int DEPTH = 16;                  // receives the SRQ holds
    static final int LIMIT = 4;                   // the SRQ limit: the event fires below this many
    static final int SIZE = 64;
    static final long TIMEOUT_NS = 10_000_000_000L;

    public static void main(String[] args) throws Exception {
        try {
            run(Ends.parse(args), System.out);
        } catch (IllegalArgumentException e) {
            System.err.println("usage: SharedReceiveQueue " + Ends.USAGE + " (" + e.getMessage() + ")");
            System.exit(2);
        }
    }

    static void run(Ends ends, PrintStream out) throws InterruptedException {
        try (Arena arena = Arena.ofShared();
             Context rctx = Verbs.open(ends.second());                                   // the receiver
             ProtectionDomain rpd = rctx.allocPd();
             CompletionQueue rcq = rctx.createCq(DEPTH);
             MemoryRegion rmr = rpd.regMr(arena.allocate(DEPTH * SIZE), Access.LOCAL_WRITE);
             // ibv_create_srq: max_wr, max_sge, srq_limit (0: not armed yet); the full name because this
             // program's own class is called SharedReceiveQueue too
             org.rdma4j.verbs.SharedReceiveQueue srq = rpd.createSrq(new SrqAttr(DEPTH, 1, 0));
             Context sctx = Verbs.open(ends.first());                                    // the senders
             ProtectionDomain spd = sctx.allocPd();
             CompletionQueue scq = sctx.createCq(SENDERS * MESSAGES);
             MemoryRegion smr = spd.regMr(arena.allocate(SENDERS * MESSAGES * SIZE), Access.LOCAL_WRITE)) {
            List<PreparedQueuePair> qps = new ArrayList<>();
            try {
                Map<Integer, Integer> senderOf = new HashMap<>();   // receiving QPN -> sender
                List<QueuePair> senders = new ArrayList<>();
                for (int s = 0; s < SENDERS; s++) {
                    // ibv_create_qp with init_attr.srq: this QP has no receive queue of its own
                    PreparedQueuePair receiver = rpd.queuePair(QpType.RC, rcq).srq(srq).prepare();
                    PreparedQueuePair sender = spd.queuePair(QpType.RC, scq).cap(new QpCap(MESSAGES, 1, 1, 1, 0))
                            .rnrRetry(7).prepare();
                    qps.add(receiver);
                    qps.add(sender);
                    senders.add(sender.handshake(receiver.endpoint()));
                    receiver.handshake(sender.endpoint());
                    senderOf.put(receiver.qp().qpn(), s);
                }
                RecvWorkRequest recv = new RecvWorkRequest();
                for (int i = 0; i < DEPTH; i++) {
                    srq.postRecv(recv.clear().wrId(i).sge(rmr, (long) i * SIZE, SIZE));     // ibv_post_srq_recv
                }
                srq.modify(new SrqAttr(0, 0, LIMIT), SrqAttrMask.LIMIT);                  // arm the limit
                SendWorkRequest send = new SendWorkRequest();
                for (int m = 0; m < MESSAGES; m++) {
                    for (int s = 0; s < SENDERS; s++) {
                        long at = (long) (m * SENDERS + s) * SIZE;
                        smr.segment().setString(at, "sender " + s + " message " + m);
                        senders.get(s).postSend(send.clear().send().flags(SendFlag.SIGNALED).sge(smr, at, SIZE));
                    }
                }
                CqPoller receives = new CqPoller(rcq);
                int[] next = new int[SENDERS];     // the message each sender's next arrival must be
                int[] consumed = new int[DEPTH];   // buffers whose receive completed, not reposted yet
                int free = 0;
                int events = 0;
                for (int got = 0; got < SENDERS * MESSAGES; got++) {
                    WorkCompletion wc = receives.takeSuccess(TIMEOUT_NS);              // ibv_poll_cq
                    int s = senderOf.get(wc.qpNum());     // wc.qp_num: the QP (and so the sender) it came in on
                    String text = rmr.segment().getString(wc.wrId() * SIZE);
                    if (!text.equals("sender " + s + " message " + next[s]++)) {
                        throw new IllegalStateException("on QPN " + wc.qpNum() + " expected message " + (next[s] - 1)
                                + " of sender " + s + ", got " + text.length() + " other characters");
                    }
                    consumed[free++] = (int) wc.wrId();
                    if (DEPTH - free < LIMIT) {
                        // fewer than LIMIT receives left: the event was raised before this completion
                        AsyncEvent event = rctx.getAsyncEvent(TIMEOUT_NS / 1_000_000);  // ibv_get_async_event
                        if (event == null || event.type() != AsyncEventType.SRQ_LIMIT_REACHED || event.srq() != srq) {
                            throw new IllegalStateException("expected SRQ_LIMIT_REACHED, got " + event);
                        }
                        rctx.ackAsyncEvent(event);                                      // ibv_ack_async_event
                        events++;
                        out.printf("SRQ limit event %d after %d messages: %d receives left; reposted %d, re-armed%n",
                                events, got + 1, DEPTH - free, free);
                        for (int i = 0; i < free; i++) {
                            srq.postRecv(recv.clear().wrId(consumed[i]).sge(rmr, (long) consumed[i] * SIZE, SIZE));
                        }
                        free = 0;
                        srq.modify(new SrqAttr(0, 0, LIMIT), SrqAttrMask.LIMIT);     // the event disarmed it
                    }
                }
                CqPoller sent = new CqPoller(scq);
                for (int i = 0; i < SENDERS * MESSAGES; i++) {
                    sent.takeSuccess(TIMEOUT_NS);
                }
                out.printf("%d senders x %d messages, each sender's in order, through one SRQ of %d receives;"
                        + " %d limit events%n", SENDERS, MESSAGES, DEPTH, events);
            } finally {
                qps.forEach(PreparedQueuePair::close);                                  // ibv_destroy_qp
            }
        }
    }
}
