// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.FaultyLink;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.verbs.*;

/**
 * UC and UD over a lossy, reordering, duplicating, corrupting link: whole messages may be lost, but
 * every message that is delivered is complete and byte-exact, and UC never delivers one twice or out
 * of order. Neither ever retransmits.
 */
class UnreliableDeliveryTest {
    private static final int MESSAGES = 600;
    private static final int SLOT = 8192;

    private static byte pattern(int seq, int offset) {
        return (byte) (seq * 31 + offset * 7 + (offset >>> 8));
    }

    @ParameterizedTest
    @ValueSource(strings = {"UC", "UD"})
    void lossLosesWholeMessagesAndNeverCorruptsOne(String typeName) throws Exception {
        QpType type = QpType.valueOf(typeName);
        LoopbackFabric fabric = new LoopbackFabric();
        FaultyLink.Faults faults = new FaultyLink.Faults(0.05, 0.01, 0.05, 0.001);
        String tag = "unrel-" + typeName;
        FaultyLink[] links = new FaultyLink[2];
        Device da = SoftDevices.createLoopback(tag + "-a", fabric, l -> links[0] = new FaultyLink(l, faults, 11));
        Device db = SoftDevices.createLoopback(tag + "-b", fabric, l -> links[1] = new FaultyLink(l, faults, 12));
        try (Arena arena = Arena.ofShared(); Context a = da.open(); Context b = db.open()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(256);
            CompletionQueue cb = b.createCq(1024);
            QueuePair qa = pa.createQp(new QpInitAttr(type, ca, ca).cap(new QpCap(64, 1, 4, 1, 0)));
            QueuePair qb = pb.createQp(new QpInitAttr(type, cb, cb).cap(new QpCap(1, 512, 1, 1, 0)));
            int qkey = 0x11111111;
            bringUp(qa, type, qkey, b.queryGid(1, 1), qb.qpn());
            bringUp(qb, type, qkey, a.queryGid(1, 1), qa.qpn());
            MemorySegment src = arena.allocate((long) SLOT * 64, 8);
            MemorySegment dst = arena.allocate((long) SLOT * 512, 8);
            MemoryRegion ms = pa.regMr(src, Access.LOCAL_WRITE);
            MemoryRegion md = pb.regMr(dst, Access.LOCAL_WRITE);
            int grh = type == QpType.UD ? 40 : 0;
            for (int i = 0; i < 512; i++) {
                qb.postRecv(new RecvWorkRequest().wrId(i).sge(md, (long) i * SLOT, SLOT));
            }
            AddressHandle ah = type == QpType.UD ? pa.createAh(AhAttr.roce(b.queryGid(1, 1), 1)) : null;
            SplittableRandom random = new SplittableRandom(5);
            int[] sizes = new int[MESSAGES];
            WorkCompletion[] wcs = WorkCompletion.array(32);
            int sent = 0;
            int completedSends = 0;
            int delivered = 0;
            int lastSeq = -1;
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (completedSends < MESSAGES && System.nanoTime() < deadline) {
                while (sent < MESSAGES && sent - completedSends < 32) {
                    int max = type == QpType.UD ? 4096 : SLOT; // UD: one packet (port MTU 4096)
                    int len = random.nextInt(max + 1);
                    sizes[sent] = len;
                    long base = (long) (sent % 64) * SLOT;
                    for (int j = 0; j < len; j++) {
                        src.set(ValueLayout.JAVA_BYTE, base + j, pattern(sent, j));
                    }
                    SendWorkRequest wr = new SendWorkRequest().wrId(sent).opcode(WrOpcode.SEND_WITH_IMM)
                            .immData(sent).flags(SendFlag.SIGNALED).sge(ms, base, len);
                    if (ah != null) {
                        wr.ud(ah, qb.qpn(), qkey);
                    }
                    qa.postSend(wr);
                    sent++;
                }
                int n = ca.poll(wcs);
                for (int i = 0; i < n; i++) {
                    assertEquals(WcStatus.SUCCESS, wcs[i].status(), wcs[i].toString());
                    completedSends++;
                }
                int m = cb.poll(wcs);
                for (int i = 0; i < m; i++) {
                    WorkCompletion wc = wcs[i];
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                    int seq = wc.immData();
                    if (type == QpType.UC) {
                        assertTrue(seq > lastSeq, "UC delivered message " + seq + " after " + lastSeq);
                    }
                    lastSeq = Math.max(lastSeq, seq);
                    assertEquals(sizes[seq] + grh, wc.byteLen(), "message " + seq + " arrived with the wrong length");
                    long base = wc.wrId() * SLOT + grh;
                    for (int j = 0; j < sizes[seq]; j++) {
                        if (dst.get(ValueLayout.JAVA_BYTE, base + j) != pattern(seq, j)) {
                            fail("message " + seq + " delivered with a wrong byte at offset " + j);
                        }
                    }
                    delivered++;
                    qb.postRecv(new RecvWorkRequest().wrId(wc.wrId()).sge(md, wc.wrId() * SLOT, SLOT));
                }
            }
            assertEquals(MESSAGES, completedSends, "UC/UD sends complete locally, lost or not");
            // Drain what is still in flight (reordered packets are held back up to 200 us).
            long end = System.nanoTime() + 200_000_000L;
            while (System.nanoTime() < end) {
                int m = cb.poll(wcs);
                delivered += m;
            }
            long lost = links[0].lost() + links[1].lost() + links[0].corrupted() + links[1].corrupted();
            assertTrue(lost > 0, "the link must have lost something");
            assertTrue(delivered > MESSAGES / 2, "most messages arrive: " + delivered);
            if (type == QpType.UC) {
                assertTrue(delivered < MESSAGES, "with loss, some UC messages are lost: " + delivered);
            }
            assertEquals(0L, a.counters(1).get("retransmits"), type + " never retransmits");
            qa.close();
            qb.close();
            if (ah != null) {
                ah.close();
            }
            ms.close();
            md.close();
            ca.close();
            cb.close();
            pa.close();
            pb.close();
        } finally {
            SoftDevices.remove(da);
            SoftDevices.remove(db);
        }
    }

    private static void bringUp(QueuePair q, QpType type, int qkey, Gid peer, int peerQpn) {
        if (type == QpType.UD) {
            q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(qkey),
                    QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
            q.modify(new QpAttr().state(QpState.RTR), QpAttrMask.STATE);
        } else {
            q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(0),
                    QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
            q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(peerQpn).rqPsn(7)
                            .ahAttr(AhAttr.roce(peer, 1)),
                    QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN);
        }
        q.modify(new QpAttr().state(QpState.RTS).sqPsn(7), QpAttrMask.STATE | QpAttrMask.SQ_PSN);
    }
}
