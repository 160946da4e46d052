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
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * Ping-pong with RDMA WRITE and READ, both signaled, waiting with wait-wakeup: the seed's third
 * program. The server's agent only tells the client where its buffer is (address, rkey, length in
 * one SEND) and then does nothing until the client says how many transfers it made; the client
 * pushes each ping into that buffer (RDMA WRITE, "push") and pulls it back as the pong (RDMA READ,
 * "pull"), waiting for each completion.
 *
 * <pre>
 * server:  java ... WriteReadSignaled -s -a 127.0.0.1 -C 10000
 * client:  java ... WriteReadSignaled -c -a 127.0.0.1 -I 127.0.0.2 -C 10000
 * </pre>
 */
public final class WriteReadSignaled {
    private WriteReadSignaled() {
    }

    /** @param args rping's letters, see {@link PingPong} @throws Exception when the run fails */
    public static void main(String[] args) throws Exception {
        System.exit(PingPong.main(program(), "WriteReadSignaled", args));
    }

    static PingPong.Program program() {
        return new PingPong.Program() {
            @Override
            public int server(InetSocketAddress bind, Settings s) throws Exception {
                return WriteReadSignaled.server(bind, s);
            }

            @Override
            public int client(InetSocketAddress server, Settings s) throws Exception {
                return WriteReadSignaled.client(server, s);
            }
        };
    }

    /**
     * The client: {@code s.iterations()} WRITE + READ round trips into the server's buffer, each pong
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
            MemoryRegion pingMr = ep.regMsgs(ping); // the WRITE's source: local access is enough
            MemoryRegion pongMr = ep.regMsgs(pong); // the READ's target
            MemoryRegion infoMr = ep.regMsgs(info);
            MemoryRegion doneMr = ep.regMsgs(done);
            ep.postRecv(0, info, infoMr); // the agent's buffer description comes first
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
                ep.postWrite(i, ping, pingMr, SendFlag.SIGNALED, remoteAddr, rkey); // push the ping
                ep.getSendComp(wc); // wait for the WRITE's completion
                check(wc, WcOpcode.RDMA_WRITE);
                ep.postRead(i, pong, pongMr, SendFlag.SIGNALED, remoteAddr, rkey); // pull it back
                ep.getSendComp(wc);
                check(wc, WcOpcode.RDMA_READ);
                verify(pong, i, "pong");
            }
            PingPong.report(s, "client", start, s.iterations());
            // the agent cannot see the transfers: tell it how many there were
            PingPong.putCount(done, s.iterations());
            ep.postSend(0, done, doneMr, SendFlag.SIGNALED);
            ep.getSendComp(wc);
            check(wc, WcOpcode.SEND);
            ep.disconnect();
            return s.iterations();
        }
    }

    /**
     * The server: one client's agent. It sends its buffer's description, waits for the client's count
     * and checks that the buffer holds the client's last ping. Also the agent of
     * {@link WriteUnsignaledReadSignaled}, whose client differs only in its loop.
     *
     * @param bind the address and port to listen on
     * @param s the settings (the same size as the client's)
     * @return the transfers the client reported, once the buffer was found to hold the last ping
     * @throws Exception when a step fails
     */
    public static int server(InetSocketAddress bind, Settings s) throws Exception {
        AddrInfo res = new AddrInfo(bind, null, true, PortSpace.TCP);
        try (Arena arena = Arena.ofShared();
             Endpoint listener = Endpoint.create(res, null, PingPong.qpAttr(), s.timeout())) {
            listener.listen(1);
            PingPong.listening(s, listener);
            try (Endpoint agent = listener.getRequest(s.timeout().toNanos(), TimeUnit.NANOSECONDS)) {
                if (agent == null) {
                    throw new VerbsException(Errno.ETIMEDOUT, "no client within " + s.timeout());
                }
                MemorySegment buf = arena.allocate(s.size(), 64);
                MemorySegment info = arena.allocate(PingPong.INFO_SIZE, 8);
                MemorySegment done = arena.allocate(4, 4);
                // rdma_reg_read and rdma_reg_write in one: the client writes the ping and reads it back
                MemoryRegion bufMr = agent.regMr(buf, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
                MemoryRegion infoMr = agent.regMsgs(info);
                MemoryRegion doneMr = agent.regMsgs(done);
                agent.postRecv(0, done, doneMr); // to catch the client's "finished"
                agent.accept(new ConnParam());

                WorkCompletion wc = new WorkCompletion();
                PingPong.putInfo(info, bufMr.address(), bufMr.rkey(), s.size());
                agent.postSend(0, info, infoMr, SendFlag.SIGNALED);
                agent.getSendComp(wc);
                check(wc, WcOpcode.SEND);
                agent.getRecvComp(wc); // the agent does nothing until the client is done
                check(wc, WcOpcode.RECV);
                int count = PingPong.count(done);
                if (count < 1) {
                    throw new IllegalStateException("the client reported " + count + " transfers");
                }
                verify(buf, count - 1, "the last ping written into the server's buffer");
                if (s.out() != null) {
                    s.out().printf("server: the client finished after %d round trips%n", count);
                }
                agent.disconnect();
                return count;
            }
        }
    }
}
