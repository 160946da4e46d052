// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.verbs;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.*;

/**
 * A ping-pong over Unreliable Datagram QPs: the client sends to an address handle made from the
 * server's endpoint ({@code ibv_create_ah}); the server answers each ping through an address handle
 * made from the ping's work completion and GRH ({@code ibv_create_ah_from_wc}). Every receive buffer
 * starts with 40 bytes where the device puts the Global Route Header; the payload follows it. A
 * datagram with the wrong Q_Key is dropped without a trace. Both ends run in this thread, step by step.
 */
public final class UdPingPong {
    static final int ROUNDS = 10;
    static final int GRH = 40;                    // the GRH area at the start of every UD receive buffer
    static final int SIZE = 64;                   // the payload; a UD message fits in one MTU
    static final int SLOT = GRH + SIZE;
    static final long TIMEOUT_NS = 5_000_000_000L;

    public static void main(String[] args) {
        try {
            run(Ends.parse(args), System.out);
        } catch (IllegalArgumentException e) {
            System.err.println("usage: UdPingPong " + Ends.USAGE + " (" + e.getMessage() + ")");
            System.exit(2);
        }
    }

    static void run(Ends ends, PrintStream out) {
        try (Arena arena = Arena.ofShared();
             End server = new End(ends.second(), arena);
             End client = new End(ends.first(), arena)) {
            QpEndpoint serverEp = server.qp.endpoint();   // what the server publishes out of band
            QpEndpoint clientEp = client.qp.endpoint();
            out.printf("server: UD QPN 0x%06x, Q_Key 0x%08x, GID %s%n", serverEp.qpn(), serverEp.qkey(),
                    serverEp.gid());
            // ibv_post_recv before anything is sent: a datagram that finds no receive is dropped
            for (int i = 0; i <= ROUNDS; i++) {
                server.qp.qp().postRecv(new RecvWorkRequest().wrId(i).sge(server.mr, (long) i * SLOT, SLOT));
                client.qp.qp().postRecv(new RecvWorkRequest().wrId(i).sge(client.mr, (long) i * SLOT, SLOT));
            }
            // ibv_create_ah: the route from the client's port and GID to the server's GID
            try (AddressHandle toServer = client.pd.createAh(client.qp.routeTo(serverEp))) {
                // a Q_Key the server's QP does not have: the datagram is sent, and dropped on arrival
                client.send(toServer, serverEp.qpn(), serverEp.qkey() ^ 0x1, "a datagram with the wrong Q_Key");
                for (int i = 0; i < ROUNDS; i++) {
                    client.send(toServer, serverEp.qpn(), serverEp.qkey(), "ping " + i);
                    WorkCompletion wc = server.recvs.takeSuccess(TIMEOUT_NS);       // ibv_poll_cq
                    MemorySegment slot = server.received(wc, "ping " + i);
                    // ibv_init_ah_from_wc: source GID from the GRH, source QPN from wc.src_qp
                    AhAttr back = AhAttr.fromWc(server.ctx, 1, wc, slot.asSlice(0, GRH));
                    int replyTo = wc.srcQp();
                    if (i == 0) {
                        out.printf("ping 0: %d bytes (%d GRH + %d payload) from QPN 0x%06x, GID %s%n", wc.byteLen(),
                                GRH, SIZE, replyTo, back.grh().dgid());
                    }
                    try (AddressHandle toClient = server.pd.createAh(back)) {      // ibv_create_ah(_from_wc)
                        server.send(toClient, replyTo, clientEp.qkey(), "pong " + i);
                    }
                    client.received(client.recvs.takeSuccess(TIMEOUT_NS), "pong " + i);
                }
            }
            out.printf("%d UD round trips; the datagram with the wrong Q_Key was dropped%n", ROUNDS);
        }
    }

    /** One end: ibv_open_device, ibv_alloc_pd, ibv_reg_mr, two ibv_create_cq, a UD QP in RTS. */
    private static final class End implements AutoCloseable {
        final Context ctx;
        final ProtectionDomain pd;
        final MemoryRegion mr;                    // ROUNDS + 1 receive slots, then the send buffer
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final PreparedQueuePair qp;
        final CqPoller sends;
        final CqPoller recvs;
        private final SendWorkRequest wr = new SendWorkRequest();

        End(String device, Arena arena) {
            ctx = Verbs.open(device);
            pd = ctx.allocPd();
            mr = pd.regMr(arena.allocate((long) (ROUNDS + 2) * SLOT, 8), Access.LOCAL_WRITE);
            sendCq = ctx.createCq(16);
            recvCq = ctx.createCq(16);
            // ibv_create_qp(IBV_QPT_UD), ibv_modify_qp to INIT (port, P_Key index, Q_Key), RTR, RTS with an SQ PSN;
            // a UD QP is never connected: each send names its destination
            qp = pd.queuePair(QpType.UD, sendCq).recvCq(recvCq).prepare();
            qp.handshake();
            sends = new CqPoller(sendCq);
            recvs = new CqPoller(recvCq);
        }

        /** ibv_post_send of one signaled SEND with wr.ud = {ah, remote_qpn, remote_qkey}; waits for its completion. */
        void send(AddressHandle ah, int qpn, int qkey, String text) {
            long at = (long) (ROUNDS + 1) * SLOT;
            mr.segment().asSlice(at, SIZE).fill((byte) 0).setString(0, text);
            qp.qp().postSend(wr.clear().send().flags(SendFlag.SIGNALED).sge(mr, at, SIZE).ud(ah, qpn, qkey));
            sends.takeSuccess(TIMEOUT_NS);
        }

        /** Checks a receive's completion and payload; returns its slot (GRH first). */
        MemorySegment received(WorkCompletion wc, String expected) {
            MemorySegment slot = mr.segment().asSlice(wc.wrId() * SLOT, SLOT);
            String got = slot.getString(GRH);
            if (wc.byteLen() != SLOT || (wc.wcFlags() & WcFlag.GRH) == 0 || !got.equals(expected)) {
                throw new IllegalStateException("expected '" + expected + "' with a GRH in " + SLOT + " bytes, got "
                        + wc.byteLen() + " bytes, wc_flags " + wc.wcFlags() + ": " + got.length() + " characters");
            }
            return slot;
        }

        @Override
        public void close() {
            qp.close();                           // ibv_destroy_qp
            sendCq.close();                       // ibv_destroy_cq
            recvCq.close();
            mr.close();                           // ibv_dereg_mr
            pd.close();                           // ibv_dealloc_pd
            ctx.close();                          // ibv_close_device
        }
    }
}
