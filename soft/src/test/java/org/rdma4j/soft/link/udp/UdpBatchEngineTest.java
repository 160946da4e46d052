// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.*;

/**
 * The requester hands the packets of one step to a UDP link together: a 16-packet RDMA WRITE between
 * two soft devices, or a post list of 16 one-packet WRITEs (one doorbell), leaves in one sendmmsg
 * (NATIVE mode), or one datagram per call where the mode has no batched send (CHANNEL), and arrives
 * intact either way.
 */
class UdpBatchEngineTest {
    private static final long WAIT_NANOS = 5_000_000_000L;
    private static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE;
    private static int nextName;

    @ParameterizedTest
    @EnumSource(value = UdpLink.Mode.class, names = {"NATIVE", "CHANNEL"})
    void aMultiPacketWriteLeavesInOneBatch(UdpLink.Mode mode) throws Exception {
        sixteenPacketsInOneStep(mode, false);
    }

    @ParameterizedTest
    @EnumSource(value = UdpLink.Mode.class, names = {"NATIVE", "CHANNEL"})
    void aPostListOfSixteenWritesLeavesInOneBatch(UdpLink.Mode mode) throws Exception {
        sixteenPacketsInOneStep(mode, true);
    }

    /** One signaled 16 KiB WRITE, or ({@code list}) 16 chained 1 KiB WRITEs of which the last is signaled. */
    private static void sixteenPacketsInOneStep(UdpLink.Mode mode, boolean list) throws Exception {
        Assumptions.assumeTrue(mode == UdpLink.Mode.CHANNEL || UdpLink.libcSocketsAvailable());
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(34291, ia, ib);
        int n = ++nextName;
        Device a = SoftDevices.createUdp("batch-a" + n, ia, port, port, mode);
        Device b = SoftDevices.createUdp("batch-b" + n, ib, port, port, mode);
        Throwable failure = null;
        try (Arena arena = Arena.ofShared(); Context ca = a.open(); Context cb = b.open()) {
            int size = 16 * 1024; // 16 packets at MTU 1024
            ProtectionDomain pa = ca.allocPd();
            ProtectionDomain pb = cb.allocPd();
            CompletionQueue cqa = ca.createCq(16);
            CompletionQueue cqb = cb.createCq(16);
            QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, cqa, cqa).cap(new QpCap(16, 8, 1, 1, 0)));
            QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cqb, cqb).cap(new QpCap(8, 8, 1, 1, 0)));
            MemoryRegion ma = pa.regMr(arena.allocate(size, 8), ACCESS);
            MemoryRegion mb = pb.regMr(arena.allocate(size, 8), ACCESS);
            bringUp(qa, cb.queryGid(1, 1), qb.qpn());
            bringUp(qb, ca.queryGid(1, 1), qa.qpn());
            MemorySegment src = ma.segment();
            for (int i = 0; i < size; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
            }
            long sentBefore = ca.counters(1).get("udp_sent_datagrams");
            long callsBefore = ca.counters(1).get("udp_sendmmsg_calls");
            if (list) {
                SendWorkRequest head = null;
                for (int i = 15; i >= 0; i--) {
                    head = new SendWorkRequest().wrId(i).opcode(WrOpcode.RDMA_WRITE)
                            .flags(i == 15 ? SendFlag.SIGNALED : 0).sge(ma, i * 1024L, 1024)
                            .rdma(mb.address() + i * 1024L, mb.rkey()).next(head);
                }
                qa.postSend(head);
            } else {
                qa.postSend(new SendWorkRequest().wrId(15).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                        .sge(ma, 0, size).rdma(mb.address(), mb.rkey()));
            }
            WorkCompletion[] wc = WorkCompletion.array(1);
            long end = System.nanoTime() + WAIT_NANOS;
            while (cqa.poll(wc) == 0) {
                assertTrue(System.nanoTime() < end, "no completion within 5 s");
                Thread.onSpinWait();
            }
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            assertEquals(15, wc[0].wrId());
            assertEquals(-1L, mb.segment().mismatch(src), "the WRITE arrived intact");
            long sent = ca.counters(1).get("udp_sent_datagrams") - sentBefore;
            long calls = ca.counters(1).get("udp_sendmmsg_calls") - callsBefore;
            assertTrue(sent >= 16, () -> "datagrams sent: " + sent);
            if (mode == UdpLink.Mode.CHANNEL) {
                assertEquals(0, calls);
            } else {
                // 16 packets in one step, from one WR or a list of 16: one call (a retransmission after a
                // lost ACK could add one more)
                assertTrue(calls >= 1 && calls <= 2, () -> "sendmmsg calls: " + calls + " for " + sent + " datagrams");
            }
            qa.close();
            qb.close();
            ma.close();
            mb.close();
            cqa.close();
            cqb.close();
            pa.close();
            pb.close();
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            try {
                SoftDevices.remove(a);
                SoftDevices.remove(b);
            } catch (RuntimeException e) {
                if (failure == null) {
                    throw e;
                }
                failure.addSuppressed(e); // still open after the failure: not the news
            }
        }
    }

    private static void bringUp(QueuePair q, Gid peer, int peerQpn) {
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(Access.REMOTE_WRITE),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(peerQpn).rqPsn(0)
                        .ahAttr(AhAttr.roce(peer, 1)).maxDestRdAtomic(1).minRnrTimer(1),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        q.modify(new QpAttr().state(QpState.RTS).sqPsn(0).timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(1),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
    }
}
