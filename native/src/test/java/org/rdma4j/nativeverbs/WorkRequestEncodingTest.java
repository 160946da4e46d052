// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rdma4j.nativeverbs.abi.QpLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The work-request and completion codecs against the C layouts (checked themselves by LayoutProbeTest):
 * what a provider's post_send would read, and what it would have written for poll_cq. No device needed.
 */
class WorkRequestEncodingTest {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private static MemorySegment all(MemorySegment head) {
        return head.reinterpret(1 << 16);
    }

    @Test
    void aChainOfWritesReadsAndAtomicsIsLaidOutAsIbvSendWr() {
        SendWrEncoder enc = new SendWrEncoder(QpType.RC, 2, 0);
        SendWorkRequest write = new SendWorkRequest().wrId(7).writeWithImm(0x1000, 0x55, 0x01020304)
                .sge(0xAAAA0000L, 100, 9).sge(0xBBBB0000L, 28, 10).flags(SendFlag.SIGNALED);
        SendWorkRequest read = new SendWorkRequest().wrId(8).read(0x2000, 0x66).sge(0xCCCC0000L, 64, 11);
        SendWorkRequest cas = new SendWorkRequest().wrId(9).compareAndSwap(0x3000, 0x77, 5, 6).sge(0xDDDD0000L, 8, 12);
        write.next(read);
        read.next(cas);
        enc.encode(write);
        MemorySegment m = all(enc.head());
        assertEquals(7, m.get(LONG, SWR_WR_ID));
        assertEquals(m.address() + SEND_WR_SIZE, m.get(LONG, SWR_NEXT));
        assertEquals(2, m.get(INT, SWR_NUM_SGE));
        assertEquals(1, m.get(INT, SWR_OPCODE), "IBV_WR_RDMA_WRITE_WITH_IMM");
        assertEquals(SendFlag.SIGNALED, m.get(INT, SWR_SEND_FLAGS));
        assertEquals(0x01020304, m.get(INT.withOrder(ByteOrder.BIG_ENDIAN), SWR_IMM_DATA), "imm_data is big-endian");
        assertEquals(0x1000, m.get(LONG, SWR_RDMA_REMOTE_ADDR));
        assertEquals(0x55, m.get(INT, SWR_RDMA_RKEY));
        MemorySegment sg = MemorySegment.ofAddress(m.get(LONG, SWR_SG_LIST)).reinterpret(2 * SGE_SIZE);
        assertEquals(0xAAAA0000L, sg.get(LONG, SGE_ADDR));
        assertEquals(100, sg.get(INT, SGE_LENGTH));
        assertEquals(9, sg.get(INT, SGE_LKEY));
        assertEquals(0xBBBB0000L, sg.get(LONG, SGE_SIZE + SGE_ADDR));
        assertEquals(10, sg.get(INT, SGE_SIZE + SGE_LKEY));
        long r = SEND_WR_SIZE;
        assertEquals(4, m.get(INT, r + SWR_OPCODE), "IBV_WR_RDMA_READ");
        assertEquals(0x2000, m.get(LONG, r + SWR_RDMA_REMOTE_ADDR));
        long c = 2 * SEND_WR_SIZE;
        assertEquals(5, m.get(INT, c + SWR_OPCODE), "IBV_WR_ATOMIC_CMP_AND_SWP");
        assertEquals(0x3000, m.get(LONG, c + SWR_ATOMIC_REMOTE_ADDR));
        assertEquals(5, m.get(LONG, c + SWR_ATOMIC_COMPARE_ADD));
        assertEquals(6, m.get(LONG, c + SWR_ATOMIC_SWAP));
        assertEquals(0x77, m.get(INT, c + SWR_ATOMIC_RKEY));
        assertEquals(0, m.get(LONG, c + SWR_NEXT), "the last request ends the chain");
        enc.close();
    }

    @Test
    void aLongChainGrowsTheArraysAndKeepsEveryLink() {
        SendWrEncoder enc = new SendWrEncoder(QpType.UC, 1, 16);
        SendWorkRequest head = null;
        for (int i = 99; i >= 0; i--) {
            SendWorkRequest w = new SendWorkRequest().wrId(i).send().sge(0x1000L * (i + 1), i, i);
            if (i % 3 == 0) {
                w.inlineData(MemorySegment.ofArray(new byte[] {(byte) i, 2, 3}));
            }
            head = w.next(head);
        }
        enc.encode(head);
        MemorySegment w = enc.head();
        for (int i = 0; i < 100; i++) {
            MemorySegment cur = w.reinterpret(SEND_WR_SIZE);
            assertEquals(i, cur.get(LONG, SWR_WR_ID));
            MemorySegment sg = MemorySegment.ofAddress(cur.get(LONG, SWR_SG_LIST)).reinterpret(SGE_SIZE);
            if (i % 3 == 0) {
                assertEquals(SendFlag.INLINE, cur.get(INT, SWR_SEND_FLAGS) & SendFlag.INLINE, "inline data sets the flag");
                assertEquals(3, sg.get(INT, SGE_LENGTH));
                MemorySegment data = MemorySegment.ofAddress(sg.get(LONG, SGE_ADDR)).reinterpret(3);
                assertEquals((byte) i, data.get(ValueLayout.JAVA_BYTE, 0), "the heap bytes were staged in native memory");
            } else {
                assertEquals(0x1000L * (i + 1), sg.get(LONG, SGE_ADDR));
                assertEquals(i, sg.get(INT, SGE_LKEY));
            }
            long next = cur.get(LONG, SWR_NEXT);
            if (i == 99) {
                assertEquals(0, next);
            } else {
                w = MemorySegment.ofAddress(next);
            }
        }
        enc.close();
    }

    @Test
    void theAddressesAPostPassesFollowTheArraysWhenTheyGrow() {
        // the posts hand the provider raw addresses (ProviderOps): after a grow they must name the new arrays
        SendWrEncoder send = new SendWrEncoder(QpType.RC, 1, 0);
        RecvWrEncoder recv = new RecvWrEncoder(1);
        SendWorkRequest sendHead = null;
        RecvWorkRequest recvHead = null;
        for (int i = 0; i < 40; i++) {
            sendHead = new SendWorkRequest().wrId(i).send().sge(0x1000, 8, 1).next(sendHead);
            recvHead = new RecvWorkRequest().wrId(i).sge(0x1000, 8, 1).next(recvHead);
        }
        for (int n = 1; n <= 40; n += 13) {
            SendWorkRequest s = sendHead;
            RecvWorkRequest r = recvHead;
            for (int k = 40; k > n; k--) {
                s = s.next();
                r = r.next();
            }
            send.encode(s);
            recv.encode(r);
            assertEquals(send.head().address(), send.headAddress(), n + " send requests");
            assertEquals(recv.head().address(), recv.headAddress(), n + " receive requests");
            assertEquals(send.badWr.address(), send.badWrAddress);
            assertEquals(recv.badWr.address(), recv.badWrAddress);
        }
        WcDecoder wc = new WcDecoder(4);
        assertEquals(wc.wcs.address(), wc.wcsAddress);
        send.close();
        recv.close();
        wc.close();
    }

    @Test
    void aRequestTheRulesRefuseEndsTheChainAndTheOnesBeforeItAreEncoded() {
        SendWrEncoder enc = new SendWrEncoder(QpType.UC, 1, 0);
        SendWorkRequest ok = new SendWorkRequest().wrId(1).send().sge(0x1000, 8, 1);
        SendWorkRequest bad = new SendWorkRequest().wrId(2).read(0x2000, 3).sge(0x1000, 8, 1);
        SendWorkRequest after = new SendWorkRequest().wrId(3).send().sge(0x1000, 8, 1);
        ok.next(bad);
        bad.next(after);
        PostException e = enc.encode(ok);
        assertEquals(Errno.EINVAL, e.errno(), "UC has no RDMA READ");
        assertEquals(1, e.badIndex());
        assertEquals(bad, e.badWr());
        MemorySegment m = all(enc.head());
        assertEquals(1, m.get(LONG, SWR_WR_ID));
        assertEquals(0, m.get(LONG, SWR_NEXT), "the chain to post ends before the refused request");
        SendWorkRequest tooMany = new SendWorkRequest().wrId(3).send().sge(1, 1, 1).sge(2, 2, 2);
        assertEquals(0, assertThrows(PostException.class, () -> enc.encode(tooMany)).badIndex(),
                "a refused first request leaves nothing to post");
        enc.close();
    }

    @Test
    void badWrPointsBackToTheRequestIndex() {
        RecvWrEncoder enc = new RecvWrEncoder(2);
        RecvWorkRequest a = new RecvWorkRequest().wrId(1).sge(0x1000, 8, 1);
        RecvWorkRequest b = new RecvWorkRequest().wrId(2).sge(0x2000, 8, 1).sge(0x3000, 4, 2);
        a.next(b);
        enc.encode(a);
        MemorySegment m = all(enc.head());
        assertEquals(2, m.get(LONG, RECV_WR_SIZE + RWR_WR_ID));
        assertEquals(2, m.get(INT, RECV_WR_SIZE + RWR_NUM_SGE));
        enc.badWr.set(LONG, 0, enc.head().address() + RECV_WR_SIZE);
        assertEquals(1, enc.badIndex());
        enc.badWr.set(LONG, 0, 0);
        assertEquals(0, enc.badIndex());
        RecvWorkRequest three = new RecvWorkRequest().wrId(3).sge(1, 1, 1).sge(2, 2, 2).sge(3, 3, 3);
        assertEquals(Errno.EINVAL, assertThrows(PostException.class, () -> enc.encode(three)).errno());
        a.next(three);
        PostException e = enc.encode(a);
        assertEquals(1, e.badIndex(), "the first request is posted, the second refused");
        assertEquals(0, all(enc.head()).get(LONG, RWR_NEXT));
        enc.close();
    }

    @Test
    void anIbvWcDecodesWithImmediateInNetworkOrderAndStatusesByNumber() {
        WcDecoder dec = new WcDecoder(2);
        MemorySegment m = dec.wcs;
        m.set(LONG, WC_WR_ID, 42);
        m.set(INT, WC_STATUS, 0);
        m.set(INT, WC_OPCODE, 129); // IBV_WC_RECV_RDMA_WITH_IMM
        m.set(INT, WC_BYTE_LEN, 4096);
        m.set(INT.withOrder(ByteOrder.BIG_ENDIAN), WC_IMM_DATA, 0xCAFEBABE);
        m.set(INT, WC_QP_NUM, 0x11);
        m.set(INT, WC_SRC_QP, 0x12);
        m.set(INT, WC_WC_FLAGS, WcFlag.WITH_IMM | WcFlag.GRH);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, WC_PKEY_INDEX, (short) 3);
        m.set(ValueLayout.JAVA_BYTE, WC_SL, (byte) 2);
        long b = WC_SIZE;
        m.set(LONG, b + WC_WR_ID, 43);
        m.set(INT, b + WC_STATUS, 12); // IBV_WC_RETRY_EXC_ERR
        m.set(INT, b + WC_OPCODE, 1000); // undefined in an error completion
        m.set(INT, b + WC_VENDOR_ERR, 0x99);
        WorkCompletion w = new WorkCompletion();
        dec.decode(0, w);
        assertEquals(42, w.wrId());
        assertEquals(WcStatus.SUCCESS, w.status());
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, w.opcode());
        assertEquals(4096, w.byteLen());
        assertEquals(0xCAFEBABE, w.immData());
        assertEquals(0x11, w.qpNum());
        assertEquals(0x12, w.srcQp());
        assertEquals(3, w.pkeyIndex());
        assertEquals(2, w.sl());
        dec.decode(1, w);
        assertEquals(43, w.wrId());
        assertEquals(WcStatus.RETRY_EXC_ERR, w.status());
        assertEquals(0x99, w.vendorErr());
        assertEquals(0, w.pkeyIndex(), "set() clears what the previous completion had");
        dec.close();
    }
}
