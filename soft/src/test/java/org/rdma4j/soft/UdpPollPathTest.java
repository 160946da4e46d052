// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
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
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The poll path of a soft device over UDP: an application polling its CQ receives on its own thread
 * (an empty CQ poll polls the link), so SEND/RECV and WRITE between two devices complete with both
 * links' receive agents held out of their sockets; and a thread that polled and then waits on a
 * completion channel is woken by the next completion, which its link's agent receives for it.
 */
class UdpPollPathTest {
    private static final long WAIT_NANOS = 10_000_000_000L;

    /** One side: a UDP device, a CQ (with a channel), an RC QP, 4 KiB of registered memory. */
    private static final class Side implements AutoCloseable {
        final Device device;
        final UdpLink link;
        final Context ctx;
        final ProtectionDomain pd;
        final Arena arena = Arena.ofShared();
        final MemorySegment buf;
        final MemoryRegion mr;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final PreparedQueuePair qp;
        final WorkCompletion[] wc = WorkCompletion.array(8);

        Side(String name, InetAddress ip, int port, int remotePort) {
            device = SoftDevices.createUdp(name, ip, port, remotePort, UdpLink.Mode.NATIVE);
            link = (UdpLink) ((SoftDevice) device).hca.link();
            ctx = device.open();
            pd = ctx.allocPd();
            buf = arena.allocate(4096, 64);
            mr = pd.regMr(buf, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            channel = ctx.createCompletionChannel();
            cq = ctx.createCq(64, channel, 0);
            qp = new QueuePairBuilder(pd, QpType.RC, cq, cq).cap(new QpCap(16, 16, 1, 1, 64)).port(1).gidIndex(1)
                    .mtu(Mtu.MTU_1024).access(Access.LOCAL_WRITE | Access.REMOTE_WRITE).timeout(14).retryCnt(7)
                    .rnrRetry(7).prepare();
        }

        /**
         * Polls until one completion, polling {@code other}'s CQ too (it must have none), so both links
         * are polled: with their agents held out, this thread is the only receiver.
         */
        WorkCompletion pollOne(Side other) {
            long end = System.nanoTime() + WAIT_NANOS;
            while (System.nanoTime() - end < 0) {
                if (cq.poll(wc, 1) == 1) {
                    assertTrue(wc[0].isSuccess(), wc[0]::toString);
                    return wc[0];
                }
                if (other.cq.poll(other.wc, 1) != 0) {
                    throw new AssertionError("unexpected completion " + other.wc[0]);
                }
            }
            throw new AssertionError("no completion in 10 s");
        }

        @Override
        public void close() {
            qp.close();
            cq.close();
            channel.close();
            mr.close();
            arena.close();
            pd.close();
            ctx.close();
            SoftDevices.remove(device);
        }
    }

    private Side a;
    private Side b;

    private void pair() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable(), "libc sockets");
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int pa = SoftDevices.freeUdpPort(27911, ia);
        int pb = SoftDevices.freeUdpPort(pa + 1, ib);
        a = new Side("poll-a", ia, pa, pb);
        b = new Side("poll-b", ib, pb, pa);
        a.qp.handshake(b.qp.endpoint());
        b.qp.handshake(a.qp.endpoint());
    }

    @AfterEach
    void tearDown() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    @Test
    void pollingTheCqReceivesWithoutTheReceiveAgents() throws Exception {
        pair();
        assertTrue(a.link.holdReceiveAgent(true));
        assertTrue(b.link.holdReceiveAgent(true));
        long agentA = a.link.agentPackets();
        long agentB = b.link.agentPackets();
        SendWorkRequest send = new SendWorkRequest().wrId(7).send().flags(SendFlag.SIGNALED | SendFlag.INLINE)
                .sge(a.buf.address(), 8, a.mr.lkey());
        for (int i = 0; i < 20; i++) {
            b.qp.qp().postRecv(new RecvWorkRequest().wrId(100 + i).sge(b.mr, 0, 64));
            a.buf.set(ValueLayout.JAVA_LONG, 0, i);
            a.qp.qp().postSend(send);
            // b's poll receives the SEND (and sends the ACK), a's poll receives the ACK
            WorkCompletion r = b.pollOne(a);
            assertEquals(WcOpcode.RECV, r.opcode());
            assertEquals(100 + i, r.wrId());
            assertEquals(i, b.buf.get(ValueLayout.JAVA_LONG, 0));
            WorkCompletion s = a.pollOne(b);
            assertEquals(WcOpcode.SEND, s.opcode());
        }
        // and a WRITE, whose target polls nothing of its own: its link is polled through its CQ
        a.buf.set(ValueLayout.JAVA_LONG, 8, 0x1234_5678_9ABCL);
        a.qp.qp().postSend(new SendWorkRequest().wrId(8).write(b.buf.address() + 8, b.mr.rkey())
                .flags(SendFlag.SIGNALED).sge(a.buf.address() + 8, 8, a.mr.lkey()));
        assertEquals(WcOpcode.RDMA_WRITE, a.pollOne(b).opcode());
        assertEquals(0x1234_5678_9ABCL, b.buf.get(ValueLayout.JAVA_LONG, 8));
        assertEquals(agentA, a.link.agentPackets(), "a's agent received nothing");
        assertEquals(agentB, b.link.agentPackets(), "b's agent received nothing");
        assertTrue(a.link.polledPackets() >= 21 && b.link.polledPackets() >= 21);
    }

    @Test
    void aCompletionChannelWaiterThatPolledBeforeIsWoken() throws Exception {
        pair();
        RecvWorkRequest recv = new RecvWorkRequest().wrId(1).sge(b.mr, 0, 64);
        SendWorkRequest send = new SendWorkRequest().wrId(1).send().flags(SendFlag.SIGNALED | SendFlag.INLINE)
                .sge(a.buf.address(), 8, a.mr.lkey());
        for (int i = 0; i < 50; i++) {
            b.qp.qp().postRecv(recv);
            b.cq.reqNotify(false);
            assertEquals(0, b.cq.poll(b.wc), "nothing yet"); // an empty poll: b's agent stands by
            Thread waker = Thread.ofPlatform().start(() -> {
                a.qp.qp().postSend(send);
            });
            CompletionQueue got = b.channel.getEvent(WAIT_NANOS / 1_000_000);
            assertNotNull(got, "woken by the completion");
            assertSame(b.cq, got);
            b.cq.ackEvents(1);
            assertEquals(1, b.cq.poll(b.wc, 1));
            assertEquals(WcOpcode.RECV, b.wc[0].opcode());
            waker.join();
            a.pollOne(b);
        }
    }

    @Test
    void aWaiterInTheLinkIsWokenByAnEventFromAnotherThread() throws Exception {
        pair();
        b.qp.qp().postRecv(new RecvWorkRequest().wrId(5).sge(b.mr, 0, 64));
        b.cq.reqNotify(false);
        long wakeups = b.ctx.counters(1).get("udp_await_wakeups");
        // The flush completion of the QP's move to ERR is made on the modifying thread, not by a
        // packet: it must end the wait of the thread receiving on the link for its event.
        Thread modifier = Thread.ofPlatform().start(() -> {
            long end = System.nanoTime() + WAIT_NANOS;
            while (!b.link.awaiting() && System.nanoTime() - end < 0) {
                Thread.onSpinWait(); // until the waiter is inside the link's wait
            }
            b.qp.qp().modify(new org.rdma4j.verbs.QpAttr().state(org.rdma4j.verbs.QpState.ERR),
                    org.rdma4j.verbs.QpAttrMask.STATE);
        });
        CompletionQueue got = b.channel.getEvent(WAIT_NANOS / 1_000_000);
        modifier.join();
        assertSame(b.cq, got, "woken by the flush completion's event");
        b.cq.ackEvents(1);
        assertEquals(1, b.cq.poll(b.wc, 1));
        assertEquals(org.rdma4j.verbs.WcStatus.WR_FLUSH_ERR, b.wc[0].status());
        assertTrue(b.ctx.counters(1).get("udp_await_wakeups") > wakeups, "the event woke the link's waiter");
    }
}
