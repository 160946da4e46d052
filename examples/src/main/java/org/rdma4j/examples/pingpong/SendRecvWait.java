// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.pingpong;

import static org.rdma4j.examples.pingpong.PingPong.check;
import static org.rdma4j.examples.pingpong.PingPong.fill;
import static org.rdma4j.examples.pingpong.PingPong.verify;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.AddrInfo;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.Endpoint;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.examples.pingpong.PingPong.Settings;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * Ping-pong with SEND/RECV and wait-wakeup: the seed's second program, {@link SendRecvBusyPoll} with
 * its busy loops replaced by {@link Endpoint#getSendComp}/{@link Endpoint#getRecvComp}
 * (rdma_get_send_comp, rdma_get_recv_comp): poll; if nothing, arm the CQ ({@code ibv_req_notify_cq}),
 * poll again, then sleep on the completion channel ({@code ibv_get_cq_event}) and acknowledge the
 * event. A longer round trip, far less CPU.
 *
 * <pre>
 * server:  java ... SendRecvWait -s -a 127.0.0.1 -C 10000
 * client:  java ... SendRecvWait -c -a 127.0.0.1 -I 127.0.0.2 -C 10000
 * </pre>
 */
public final class SendRecvWait {
    private SendRecvWait() {
    }

    /** @param args rping's letters, see {@link PingPong} @throws Exception when the run fails */
    public static void main(String[] args) throws Exception {
        System.exit(PingPong.main(program(), "SendRecvWait", args));
    }

    static PingPong.Program program() {
        return new PingPong.Program() {
            @Override
            public int server(InetSocketAddress bind, Settings s) throws Exception {
                return SendRecvWait.server(bind, s);
            }

            @Override
            public int client(InetSocketAddress server, Settings s) throws Exception {
                return SendRecvWait.client(server, s);
            }
        };
    }

    /**
     * The client: {@code s.iterations()} round trips, each pong checked against its ping.
     *
     * @param server the server's address and port
     * @param s the settings
     * @return the round trips verified
     * @throws Exception when a step fails
     */
    public static int client(InetSocketAddress server, Settings s) throws Exception {
        // 2. rdma_getaddrinfo: the server's address (and our source, when given)
        AddrInfo res = new AddrInfo(s.source() == null ? null : new InetSocketAddress(s.source(), 0), server, false,
                PortSpace.TCP);
        // 3.-4. the QP's properties; rdma_create_ep resolves the route and makes the QP with its CQs
        try (Arena arena = Arena.ofShared();
             Endpoint ep = Endpoint.create(res, null, PingPong.qpAttr(), s.timeout())) {
            // 5.-6. memory for the ping and the pong; rdma_reg_msgs
            MemorySegment ping = arena.allocate(s.size(), 64);
            MemorySegment pong = arena.allocate(s.size(), 64);
            MemoryRegion pingMr = ep.regMsgs(ping);
            MemoryRegion pongMr = ep.regMsgs(pong);
            // 7.-8. rdma_connect with rdma_cm's usual connection parameters
            ep.connect(new ConnParam());

            WorkCompletion wc = new WorkCompletion();
            long start = PingPong.start(s, "client"); // 9.
            for (int i = 0; i < s.iterations(); i++) { // 10.
                fill(ping, i);
                pong.fill((byte) 0);
                ep.postRecv(i, pong, pongMr); // 11. catch the pong before the ping goes
                ep.postSend(i, ping, pingMr, SendFlag.SIGNALED); // 12.
                ep.getSendComp(wc); // 13. wait-wakeup
                check(wc, WcOpcode.SEND);
                ep.getRecvComp(wc); // 14.
                check(wc, WcOpcode.RECV);
                if (wc.byteLen() != s.size()) {
                    throw new IllegalStateException("pong " + i + " has " + wc.byteLen() + " bytes");
                }
                verify(pong, i, "pong"); // 15.
            }
            PingPong.report(s, "client", start, s.iterations()); // 17.
            ep.disconnect(); // 18.
            return s.iterations();
        } // 19.-22. rdma_dereg_mr, rdma_destroy_ep, free: the endpoint's close, then the arena's
    }

    /**
     * The server: waits (bounded by the settings' timeout) for one client and is its agent.
     *
     * @param bind the address and port to listen on
     * @param s the settings (the same iterations and size as the client's)
     * @return the pings verified
     * @throws Exception when a step fails
     */
    public static int server(InetSocketAddress bind, Settings s) throws Exception {
        // listener 2.-5.: rdma_getaddrinfo (passive), rdma_create_ep (binds), rdma_listen
        AddrInfo res = new AddrInfo(bind, null, true, PortSpace.TCP);
        try (Arena arena = Arena.ofShared();
             Endpoint listener = Endpoint.create(res, null, PingPong.qpAttr(), s.timeout())) {
            listener.listen(1);
            PingPong.listening(s, listener);
            // listener 7.: rdma_get_request; the agent's id comes with its QP
            try (Endpoint agent = listener.getRequest(s.timeout().toNanos(), TimeUnit.NANOSECONDS)) {
                if (agent == null) {
                    throw new VerbsException(Errno.ETIMEDOUT, "no client within " + s.timeout());
                }
                // agent 2.-3.: two buffers, so the next ping can land while this one goes back
                MemorySegment bufs = arena.allocate(2L * s.size(), 64);
                MemoryRegion mr = agent.regMsgs(bufs);
                agent.postRecv(0, buffer(bufs, 0, s), mr); // 4. the first receive, before accepting
                agent.accept(new ConnParam()); // 5.-6.

                WorkCompletion wc = new WorkCompletion();
                long start = 0;
                for (int i = 0; i < s.iterations(); i++) { // 7.
                    agent.getRecvComp(wc); // 8. wait-wakeup
                    check(wc, WcOpcode.RECV);
                    if (i == 0) {
                        start = PingPong.start(s, "server"); // 9.
                    }
                    MemorySegment ping = buffer(bufs, i, s);
                    if (wc.byteLen() != s.size()) {
                        throw new IllegalStateException("ping " + i + " has " + wc.byteLen() + " bytes");
                    }
                    verify(ping, i, "ping");
                    agent.postRecv(i + 1, buffer(bufs, i + 1, s), mr); // 10.
                    agent.postSend(i, ping, mr, SendFlag.SIGNALED); // 11. the pong: the ping's bytes
                    agent.getSendComp(wc); // 12.
                    check(wc, WcOpcode.SEND);
                }
                PingPong.report(s, "server", start, s.iterations()); // 14.
                agent.disconnect(); // 15.
                return s.iterations();
            } // 16.-19.
        }
    }

    private static MemorySegment buffer(MemorySegment bufs, int i, Settings s) {
        return bufs.asSlice((long) (i % 2) * s.size(), s.size());
    }
}
