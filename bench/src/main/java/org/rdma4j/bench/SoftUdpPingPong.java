// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WorkCompletion;

/**
 * {@link UdpFloor}'s {@code stack=rdma}: the same ping-pong as its UDP one, as RC SEND/RECV of
 * {@code size} bytes (inline, signaled) between two soft devices over RoCEv2/UDP, one per process, so
 * the device's round trip is measured by the same harness, with the same percentiles, as the floor.
 * Busy polling polls the CQ in a loop; {@code events} waits on a completion channel (arm, poll, wait,
 * poll) as {@code ibv_rc_pingpong -e} does. Every wait gives up after 10 s. Not thread safe.
 */
final class SoftUdpPingPong implements AutoCloseable {
    private static final int RECV_WRID = 1;
    private static final int SEND_WRID = 2;
    private static final int RX_DEPTH = 64;
    private static final int TX_DEPTH = 16;
    private static final long GIVE_UP_NS = 10_000_000_000L;
    static final byte END = (byte) 0xEE;

    private final Device device;
    private final Context ctx;
    private final ProtectionDomain pd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment sendBuf;
    private final MemorySegment recvBuf;
    private final MemoryRegion mr;
    private final MemoryRegion smr;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final PreparedQueuePair prepared;
    private final QueuePair qp;
    private final boolean events;
    private final SendWorkRequest send = new SendWorkRequest();
    private final RecvWorkRequest recv = new RecvWorkRequest();
    private final WorkCompletion[] wc = WorkCompletion.array(16);
    private int sendsOutstanding;
    private int recvsDone;
    private int eventsToAck;
    private static final boolean DIAG = Boolean.getBoolean("rdma4j.bench.diag");
    private boolean dumped;

    SoftUdpPingPong(String bind, int udpPort, int size, boolean events) throws IOException {
        this.events = events;
        device = SoftDevices.createUdp("udpfloor-" + ProcessHandle.current().pid(), InetAddress.getByName(bind),
                udpPort, udpPort, UdpLink.Mode.AUTO);
        ctx = device.open();
        pd = ctx.allocPd();
        sendBuf = arena.allocate(Math.max(size, 64), 64);
        recvBuf = arena.allocate(Math.max(size, 64), 64);
        mr = pd.regMr(recvBuf, Access.LOCAL_WRITE);
        channel = events ? ctx.createCompletionChannel() : null;
        cq = ctx.createCq(RX_DEPTH + TX_DEPTH + 1, channel, 0);
        prepared = new QueuePairBuilder(pd, QpType.RC, cq, cq).cap(new QpCap(TX_DEPTH, RX_DEPTH, 1, 1, 64))
                .port(1).gidIndex(1).mtu(Mtu.MTU_1024).timeout(14).retryCnt(7).rnrRetry(7).prepare();
        qp = prepared.qp();
        smr = pd.regMr(sendBuf, Access.LOCAL_WRITE);
        send.wrId(SEND_WRID).send().flags(SendFlag.SIGNALED | (size <= 64 ? SendFlag.INLINE : 0))
                .sge(sendBuf.address(), size, smr.lkey());
        recv.wrId(RECV_WRID).sge(recvBuf.address(), (int) recvBuf.byteSize(), mr.lkey());
        for (int i = 0; i < RX_DEPTH; i++) {
            qp.postRecv(recv);
        }
        if (events) {
            cq.reqNotify(false);
        }
    }

    /** This QP's endpoint as text, for the other process. */
    String endpoint() {
        return prepared.endpoint().toString();
    }

    void connect(String remote) {
        prepared.handshake(QpEndpoint.parse(remote));
    }

    /** Sends one message whose first byte is {@code first}. */
    void post(byte first) throws IOException {
        while (sendsOutstanding == TX_DEPTH) {
            reap();
        }
        sendBuf.set(ValueLayout.JAVA_BYTE, 0, first);
        qp.postSend(send);
        sendsOutstanding++;
    }

    /** Waits for the next received message; returns its first byte. */
    byte awaitReceive() throws IOException {
        while (recvsDone == 0) {
            reap();
        }
        recvsDone--;
        qp.postRecv(recv);
        return recvBuf.get(ValueLayout.JAVA_BYTE, 0);
    }

    /** Polls (busy) or waits for an event (events) until at least one completion came. */
    private void reap() throws IOException {
        long giveUp = 0;
        for (;;) {
            int n = cq.poll(wc);
            if (n > 0) {
                for (int i = 0; i < n; i++) {
                    if (!wc[i].isSuccess()) {
                        throw new IOException("completion failed: " + wc[i].status());
                    }
                    if (wc[i].wrId() == SEND_WRID) {
                        sendsOutstanding--;
                    } else {
                        recvsDone++;
                    }
                }
                return;
            }
            if (events) {
                try {
                    CompletionQueue got = channel.getEvent(10_000);
                    if (got == null) {
                        throw new IOException("no completion event in 10 s");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
                if (++eventsToAck == 64) {
                    cq.ackEvents(eventsToAck);
                    eventsToAck = 0;
                }
                cq.reqNotify(false);
            } else {
                long now = System.nanoTime();
                if (giveUp == 0) {
                    giveUp = now + GIVE_UP_NS;
                } else if (now - giveUp > 0) {
                    throw new IOException("no completion in 10 s");
                } else if (DIAG && !dumped && now - (giveUp - GIVE_UP_NS) > 300_000_000L) {
                    dumped = true;
                    System.err.println("stall 300 ms: " + counters());
                    Thread.getAllStackTraces().forEach((t, st) -> {
                        if (t.getName().startsWith("rdma4j") || t.getName().equals("main")) {
                            System.err.println(t.getName() + " " + t.getState());
                            for (int i = 0; i < Math.min(12, st.length); i++) {
                                System.err.println("    " + st[i]);
                            }
                        }
                    });
                }
            }
        }
    }

    /** The device's counters, for the report. */
    java.util.Map<String, Long> counters() {
        return ctx.counters(1);
    }

    @Override
    public void close() {
        try {
            while (sendsOutstanding > 0) {
                reap();
            }
        } catch (IOException | RuntimeException e) {
            // closing anyway
        }
        if (eventsToAck > 0) {
            cq.ackEvents(eventsToAck);
        }
        prepared.close();
        cq.close();
        mr.close();
        smr.close();
        arena.close();
        if (channel != null) {
            channel.close();
        }
        pd.close();
        ctx.close();
        SoftDevices.remove(device);
    }
}
