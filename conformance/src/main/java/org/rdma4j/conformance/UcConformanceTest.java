// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, Data path, "UC data": SEND and RDMA WRITE (with and without immediate) over
 * unreliable connections, multi-packet; UC never retransmits and never waits for the receiver.
 */
@Rule("S-DATA-6")
@Requires(value = Capability.RELIABLE_LINK, why = "UC never retransmits: on a lossy link a packet, and with it its message, may be lost")
public class UcConformanceTest extends AbstractDataPathTest {

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSizes")
    void ucSendDeliversExactlyTheBytes(Mtu mtu, int size) {
        assumeMtu(mtu);
        sendAndCheck(connect(spec(QpType.UC).mtu(mtu)), size, false, size + 5);
    }

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSomeSizes")
    void ucSendWithImmediateDeliversIt(Mtu mtu, int size) {
        assumeMtu(mtu);
        sendAndCheck(connect(spec(QpType.UC).mtu(mtu)), size, true, size + 6);
    }

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSizes")
    void ucWritePlacesExactlyTheBytes(Mtu mtu, int size) {
        assumeMtu(mtu);
        writeAndCheck(connect(spec(QpType.UC).mtu(mtu)), size, false, size + 7);
    }

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSomeSizes")
    void ucWriteWithImmediateConsumesAReceive(Mtu mtu, int size) {
        assumeMtu(mtu);
        writeAndCheck(connect(spec(QpType.UC).mtu(mtu)), size, true, size + 8);
    }

    @Test
    void sendWithoutAReceiveIsDroppedAndNeverRetransmitted() {
        QpPair p = connect(spec(QpType.UC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, 3000, 90);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 3000));
        expect(p.a().sendCq(), 1, WcOpcode.SEND); // UC completes without waiting for the receiver
        // Over a network the message may still be in flight: let it land (and be dropped) first.
        assertNoCompletion(p.b().recvCq(), "nothing can be received without a receive posted");
        postRecv(p.b(), 2, dst, 0, 3000);
        assertNoCompletion(p.b().recvCq(), "the dropped message is never sent again");
        fillPattern(src.segment(), 0, 3000, 91);
        p.a().qp().postSend(wr(3, WrOpcode.SEND).sge(src, 0, 3000));
        expect(p.a().sendCq(), 3, WcOpcode.SEND);
        assertEquals(3000, expect(p.b().recvCq(), 2, WcOpcode.RECV).byteLen());
        assertPattern(dst.segment(), 0, 3000, 91, "the next message after a dropped one");
    }

    /**
     * UC never retransmits: a sender that starts over (reset and brought back up with a lower PSN, far
     * behind the receiver's) while the receiver is left alone is heard, not dropped as old (rxe check_psn).
     */
    @Test
    void senderStartingOverAtALowerPsnIsReceived() {
        QpPair p = connect(spec(QpType.UC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 3; i++) {
            postRecv(p.b(), 10 + i, dst, 0, 100);
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, 0, 100));
            expect(p.a().sendCq(), i, WcOpcode.SEND);
            expect(p.b().recvCq(), 10 + i, WcOpcode.RECV);
        }
        PairSpec s = p.spec();
        QpBringUp.to(p.a().qp(), QpState.RESET);
        QpBringUp.toInit(p.a().qp(), s.accessA, s.qkey);
        QpBringUp.toRtr(p.a().qp(), s.mtu, p.b().gid(), p.a().gidIndex(), p.b().qpn(), s.psnB, s.maxDestRdAtomic,
                s.minRnrTimerA);
        QpBringUp.toRts(p.a().qp(), (s.psnA - 0x10000) & 0xFFFFFF, s.timeout, s.retryCnt, s.rnrRetry,
                s.maxRdAtomic);
        fillPattern(src.segment(), 0, 100, 93);
        postRecv(p.b(), 20, dst, 0, 100);
        p.a().qp().postSend(wr(5, WrOpcode.SEND).sge(src, 0, 100));
        expect(p.a().sendCq(), 5, WcOpcode.SEND);
        assertEquals(100, expect(p.b().recvCq(), 20, WcOpcode.RECV).byteLen());
        assertPattern(dst.segment(), 0, 100, 93, "the message sent again from the first PSN");
    }

    @ParameterizedTest
    @EnumSource(value = QpState.class, names = {"ERR", "RESET"})
    void sendToAPeerThatDropsEverythingStillSucceeds(QpState peerState) {
        QpPair p = connect(spec(QpType.UC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        QpBringUp.to(p.b().qp(), peerState);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 100));
        WorkCompletion wc = expect(p.a().sendCq(), 1, WcStatus.SUCCESS);
        assertEquals(WcOpcode.SEND, wc.opcode());
        p.a().qp().postSend(wr(2, WrOpcode.RDMA_WRITE).sge(src, 0, 100).rdma(0x1000, 0x1234));
        expect(p.a().sendCq(), 2, WcOpcode.RDMA_WRITE);
        assertQpState(p.a().qp(), QpState.RTS);
    }
}
