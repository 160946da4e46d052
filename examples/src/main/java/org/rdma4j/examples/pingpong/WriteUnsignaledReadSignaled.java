// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.pingpong;

import static org.rdma4j.examples.pingpong.PingPong.check;
import static org.rdma4j.examples.pingpong.PingPong.fill;
import static org.rdma4j.examples.pingpong.PingPong.verify;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.rdma4j.cm.AddrInfo;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.Endpoint;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.examples.pingpong.PingPong.Settings;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * Ping-pong with an unsignaled RDMA WRITE and a signaled READ: the seed's fourth and fastest
 * program. The READ is posted right behind the WRITE without waiting for it: the transport's
 * ordering makes the READ complete after the WRITE, so the READ's completion says the WRITE
 * succeeded too, and a WRITE that fails still produces a completion (with its error), which the
 * check below reports. The server's agent is {@link WriteReadSignaled#server}'s.
 *
 * <pre>
 * server:  java ... WriteUnsignaledReadSignaled -s -a 127.0.0.1 -C 10000
 * client:  java ... WriteUnsignaledReadSignaled -c -a 127.0.0.1 -I 127.0.0.2 -C 10000
 * </pre>
 */
public final class WriteUnsignaledReadSignaled {
    private WriteUnsignaledReadSignaled() {
    }

    /** @param args rping's letters, see {@link PingPong} @throws Exception when the run fails */
    public static void main(String[] args) throws Exception {
        System.exit(PingPong.main(program(), "WriteUnsignaledReadSignaled", args));
    }

    static PingPong.Program program() {
        return new PingPong.Program() {
            @Override
            public int server(InetSocketAddress bind, Settings s) throws Exception {
                return WriteReadSignaled.server(bind, s);
            }

            @Override
            public int client(InetSocketAddress server, Settings s) throws Exception {
                return WriteUnsignaledReadSignaled.client(server, s);
            }
        };
    }

    /**
     * The client: {@code s.iterations()} unsignaled WRITE + signaled READ round trips, each pong
     * checked against its ping, then the count in a SEND.
     *
     * @param server the server's address and port
     * @param s the settings
     * @return the round trips verified
     * @throws Exception when a step fails
     */
    public static int client(InetSocketAddress server, Settings s) throws Exception {
        AddrInfo res = new AddrInfo(s.source() == null ? null : new InetSocketAddress(s.source(), 0), server, false,
                PortSpace.TCP);
        try (Arena arena = Arena.ofShared();
             Endpoint ep = Endpoint.create(res, null, PingPong.qpAttr(), s.timeout())) {
            MemorySegment ping = arena.allocate(s.size(), 64);
            MemorySegment pong = arena.allocate(s.size(), 64);
            MemorySegment info = arena.allocate(PingPong.INFO_SIZE, 8);
            MemorySegment done = arena.allocate(4, 4);
            MemoryRegion pingMr = ep.regMsgs(ping);
            MemoryRegion pongMr = ep.regMsgs(pong);
            MemoryRegion infoMr = ep.regMsgs(info);
            MemoryRegion doneMr = ep.regMsgs(done);
            ep.postRecv(0, info, infoMr);
            ep.connect(new ConnParam());

            WorkCompletion wc = new WorkCompletion();
            ep.getRecvComp(wc);
            check(wc, WcOpcode.RECV);
            long remoteAddr = PingPong.infoAddr(info);
            int rkey = PingPong.infoRkey(info);
            if (wc.byteLen() != PingPong.INFO_SIZE || PingPong.infoLength(info) < s.size()) {
                throw new IllegalStateException("the server's buffer (" + PingPong.infoLength(info)
                        + " bytes) is smaller than a ping (" + s.size() + ")");
            }

            long start = PingPong.start(s, "client");
            for (int i = 0; i < s.iterations(); i++) {
                fill(ping, i);
                pong.fill((byte) 0);
                ep.postWrite(i, ping, pingMr, 0, remoteAddr, rkey); // unsignaled: no completion unless it fails
                ep.postRead(i, pong, pongMr, SendFlag.SIGNALED, remoteAddr, rkey); // do not wait for the WRITE
                ep.getSendComp(wc); // the READ's completion (or the failed WRITE's)
                check(wc, WcOpcode.RDMA_READ);
                verify(pong, i, "pong");
            }
            PingPong.report(s, "client", start, s.iterations());
            PingPong.putCount(done, s.iterations());
            ep.postSend(0, done, doneMr, SendFlag.SIGNALED);
            ep.getSendComp(wc);
            check(wc, WcOpcode.SEND);
            ep.disconnect();
            return s.iterations();
        }
    }
}
