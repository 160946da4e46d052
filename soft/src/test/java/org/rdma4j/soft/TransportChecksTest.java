// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.engine.MemKey;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.AtomicEth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.verbs.*;

/**
 * Transport checks compared with Linux rxe, seen on the wire: one soft device whose link is a script
 * standing in for the peer. It records every packet the device sends and may answer (a hostile or
 * looping responder, or a requester sending exactly the packets a test needs).
 */
class TransportChecksTest {
    private static final int PEER_QPN = 0x99;
    private static final int MTU = 1024;

    /** A packet the device sent. */
    record Sent(int opcode, int psn, int payloadLength, int syndrome, int hopLimit, int trafficClass) {
    }

    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private volatile Consumer<Sent> peer = s -> { };
    private final PacketPool pool = new PacketPool();
    private Device device;
    private Hca hca;
    private Context ctx;
    private final java.util.ArrayDeque<VerbsResource> created = new java.util.ArrayDeque<>();
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion mr;
    private Arena arena;
    private final Gid peerGid = Gid.parse("::ffff:10.9.9.7");

    @BeforeEach
    void setUp() {
        device = SoftDevices.createLoopback("transport-checks", new LoopbackFabric(), null);
        hca = ((SoftDevice) device).hca;
        hca.setLink(new Link() {
            @Override
            public void send(Packet p) {
                Bth bth = new Bth().wrap(p.buffer, 0);
                int op = bth.opcode();
                int syndrome = Opcode.hasAeth(op)
                        ? new Aeth().wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_AETH)).syndrome() : -1;
                Sent s = new Sent(op, bth.psn(), p.payloadLength, syndrome, p.hopLimit, p.trafficClass);
                p.release();
                sent.add(s);
                peer.accept(s);
            }
        });
        ctx = device.open();
        pd = track(ctx.allocPd());
        cq = track(ctx.createCq(64));
        qp = newQp();
        arena = Arena.ofShared();
        mr = track(pd.regMr(arena.allocate(4 * MTU, 8), Access.LOCAL_WRITE | Access.REMOTE_WRITE
                | Access.REMOTE_READ | Access.REMOTE_ATOMIC | Access.MW_BIND));
    }

    /** Remembers a resource for {@link #tearDown}, which closes them newest first. */
    private <T extends VerbsResource> T track(T r) {
        created.push(r);
        return r;
    }

    private QueuePair newQp() {
        QueuePair q = track(pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(8, 8, 1, 1, 0))));
        ReceivePathFuzzTest.Connect.bringUp(q, QpType.RC, peerGid, PEER_QPN); // MTU 1024, PSNs 0, 7 retries
        return q;
    }

    @AfterEach
    void tearDown() {
        // A device with an open context cannot be removed: close what the test made, newest first.
        while (!created.isEmpty()) {
            created.pop().close();
        }
        ctx.close();
        SoftDevices.remove(device);
        arena.close();
    }

    // ---------------------------------------------------------------- the scripted peer

    private List<Sent> requests() {
        return sent.stream().filter(s -> !Opcode.isResponse(s.opcode())).toList();
    }

    private List<Sent> takeSent() {
        List<Sent> l = new ArrayList<>(sent);
        sent.clear();
        return l;
    }

    /** Delivers a packet from the peer to {@code to}: BTH, then {@code ext} writes the extension headers. */
    private void inject(QueuePair to, int op, int psn, Consumer<MemorySegment> ext, int payload) {
        Packet p = pool.acquire();
        new Bth().wrap(p.buffer, 0).write(op, false, (4 - (payload & 3)) & 3, 0xFFFF, to.qpn(), true, psn);
        ext.accept(p.buffer);
        p.headerLength = Opcode.headerLength(op);
        p.setFlatPayload(payload);
        p.srcGid = peerGid;
        p.dstGid = ctx.queryGid(1, 1);
        hca.receive(p);
    }

    private void injectNak(int syndrome, int psn) {
        inject(qp, Opcode.RC_ACKNOWLEDGE, psn, b -> new Aeth().wrap(b, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE,
                Opcode.HEADER_AETH)).write(syndrome, 0), 0);
    }

    private void injectRead(QueuePair to, int psn, long va, int rkey, int length) {
        int op = Opcode.RC_RDMA_READ_REQUEST;
        inject(to, op, psn, b -> new Reth().wrap(b, Opcode.offsetOf(op, Opcode.HEADER_RETH)).virtualAddress(va)
                .rkey(rkey).dmaLength(length), 0);
    }

    private void injectWriteOnly(QueuePair to, int psn, long va, int rkey, int length) {
        int op = Opcode.RC_RDMA_WRITE_ONLY;
        inject(to, op, psn, b -> new Reth().wrap(b, Opcode.offsetOf(op, Opcode.HEADER_RETH)).virtualAddress(va)
                .rkey(rkey).dmaLength(length), length);
    }

    /** The next completion of the test's CQ (fails the test after a bounded wait). */
    private WorkCompletion poll() {
        return ReceivePathFuzzTest.Connect.poll(cq);
    }

    private static void assertSent(List<Sent> got, int... opcodeAndPsn) {
        assertEquals(opcodeAndPsn.length / 2, got.size(), got::toString);
        for (int i = 0; i < got.size(); i++) {
            assertEquals(Opcode.name(opcodeAndPsn[2 * i]), Opcode.name(got.get(i).opcode()), got::toString);
            assertEquals(opcodeAndPsn[2 * i + 1], got.get(i).psn(), got::toString);
        }
    }

    // ---------------------------------------------------------------- requester side

    /** rxe: a PSN sequence NAK goes through the retry path; a responder that NAKs for ever ends the WR. */
    @Test
    void sequenceNakThatAcknowledgesNothingSpendsARetryAndEndsInRetryExceeded() {
        peer = s -> {
            if (!Opcode.isResponse(s.opcode())) {
                injectNak(Aeth.NAK_PSN_SEQ_ERR, s.psn()); // "expected this very PSN": acknowledges nothing
            }
        };
        qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
        WorkCompletion wc = poll();
        assertNotNull(wc, "the looping NAKs ended");
        assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
        assertEquals(8, requests().size(), "the first send and retry_cnt (7) retransmissions");
        assertEquals(QpState.ERR, qp.query().qpState);
    }

    @Test
    void sequenceNaksForOneGapStartOneRetryNotOnePerNak() {
        // PSN 0 is lost; the responder NAKs "expected 0" for PSN 1 and for PSN 2 (as rxe's responder
        // would, once per out-of-order packet that reaches it). One retransmission, one retry spent.
        java.util.Map<Integer, Integer> seen = new java.util.HashMap<>();
        peer = s -> {
            if (Opcode.isResponse(s.opcode())) {
                return;
            }
            int n = seen.merge(s.psn(), 1, Integer::sum);
            if (n == 1 && s.psn() != 0) {
                injectNak(Aeth.NAK_PSN_SEQ_ERR, 0);
            } else if (n == 2 && s.psn() == 2) {
                inject(qp, Opcode.RC_ACKNOWLEDGE, 2, b -> new Aeth().wrap(b, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE,
                        Opcode.HEADER_AETH)).write(Aeth.ACK_CREDITS_INVALID, 1), 0);
            }
        };
        long retriesBefore = ctx.counters(1).get("completer_retry_err");
        qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 3 * MTU).flags(SendFlag.SIGNALED));
        WorkCompletion wc = poll();
        assertNotNull(wc);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(6, requests().size(), "three packets, then all three once more: " + requests());
        assertEquals(1, ctx.counters(1).get("completer_retry_err") - retriesBefore, "one retry for one gap");
    }

    @Test
    void connectedQpPacketsCarryTheHopLimitAndTrafficClassOfItsAddressVector() {
        // rxe builds every RC/UC packet's IP header from the QP's AV (hop limit -> TTL, traffic class -> TOS)
        QueuePair q = track(pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(8, 8, 1, 1, 0))));
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(Access.REMOTE_WRITE),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(PEER_QPN).rqPsn(0)
                .maxDestRdAtomic(1).minRnrTimer(1)
                .ahAttr(new AhAttr(new GlobalRoute(peerGid, 0, 1, 3, 0x28), 0, 0, 0, 0, 1)),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        q.modify(new QpAttr().state(QpState.RTS).sqPsn(0).timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(1),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
        q.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
        injectWriteOnly(q, 0, mr.address(), mr.rkey(), 16); // the peer's WRITE: the responder ACKs it
        List<Sent> out = takeSent();
        assertTrue(out.stream().anyMatch(s -> s.opcode() == Opcode.RC_SEND_ONLY), () -> "no SEND went out: " + out);
        assertTrue(out.stream().anyMatch(s -> s.opcode() == Opcode.RC_ACKNOWLEDGE), () -> "no ACK went out: " + out);
        for (Sent s : out) {
            assertEquals(3, s.hopLimit(), () -> "hop limit of " + s);
            assertEquals(0x28, s.trafficClass(), () -> "traffic class of " + s);
        }
    }

    @Test
    void sequenceNakBehindWhatIsAcknowledgedIsIgnored() {
        // A NAK the network delayed past the ACK that followed it: rxe's check_psn drops it; it must
        // neither resend acknowledged packets nor spend a retry. A three-packet SEND, PSNs 0..2.
        qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 3 * MTU).flags(SendFlag.SIGNALED));
        injectAck(1, 0); // PSNs 0 and 1 arrived
        takeSent();
        long retriesBefore = ctx.counters(1).get("completer_retry_err");
        injectNak(Aeth.NAK_PSN_SEQ_ERR, 1); // stale: it asks for PSN 1, which is acknowledged
        assertEquals(List.of(), requests(), "nothing is resent for a stale NAK");
        assertEquals(retriesBefore, ctx.counters(1).get("completer_retry_err"), "no retry spent");
        injectAck(2, 1);
        WorkCompletion wc = poll();
        assertEquals(1, wc.wrId());
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
    }

    private void injectAck(int psn, int msn) {
        inject(qp, Opcode.RC_ACKNOWLEDGE, psn, b -> new Aeth().wrap(b, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE,
                Opcode.HEADER_AETH)).write(Aeth.ACK_CREDITS_INVALID, msn), 0);
    }

    @Test
    void sequenceNakThatAcknowledgesSomethingNewCostsNoRetry() {
        // two SENDs; the peer takes the first and NAKs the second every time it comes
        peer = s -> {
            if (s.opcode() == Opcode.RC_SEND_ONLY && s.psn() == 1) {
                injectNak(Aeth.NAK_PSN_SEQ_ERR, 1);
            }
        };
        qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED)
                .next(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED)));
        WorkCompletion first = poll();
        assertEquals(1, first.wrId());
        assertEquals(WcStatus.SUCCESS, first.status(), "the first NAK acknowledged PSN 0");
        WorkCompletion second = poll();
        assertNotNull(second);
        assertEquals(WcStatus.RETRY_EXC_ERR, second.status());
        long tries = requests().stream().filter(r -> r.psn() == 1).count();
        assertEquals(9, tries, "first try, the free resend after the NAK that acknowledged PSN 0, then 7 retries");
    }

    @Test
    void unknownNakCodeCompletesWithRemoteOperationalError() {
        peer = s -> {
            if (!Opcode.isResponse(s.opcode())) {
                injectNak(0x65, s.psn()); // a NAK code IBTA reserves
            }
        };
        qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
        WorkCompletion wc = poll();
        assertNotNull(wc);
        assertEquals(WcStatus.REM_OP_ERR, wc.status());
        assertEquals(1, requests().size(), "not retransmitted");
    }

    /** IBA 10.6.5.1 local invalidate fence (rxe_wqe_is_fenced): LOCAL_INV waits for all earlier WRs. */
    @Test
    void localInvalidateWaitsForEveryEarlierWorkRequest() {
        MemoryWindow mw = track(pd.allocMw(MwType.TYPE_2));
        int rkey = mw.nextRkey();
        qp.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED)
                .bindMw(mw, rkey, mr, mr.address(), 256, Access.REMOTE_WRITE));
        assertEquals(WcStatus.SUCCESS, poll().status());
        MemKey key = hca.keys.lookup(rkey);
        assertTrue(key.valid);
        qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
        qp.postSend(new SendWorkRequest().wrId(3).flags(SendFlag.SIGNALED).localInvalidate(rkey));
        assertTrue(key.valid, "LOCAL_INV waits while the SEND is unacknowledged");
        WorkCompletion[] none = WorkCompletion.array(1);
        assertEquals(0, cq.poll(none));
        inject(qp, Opcode.RC_ACKNOWLEDGE, 0, b -> new Aeth().wrap(b, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE,
                Opcode.HEADER_AETH)).write(Aeth.ACK_CREDITS_INVALID, 1), 0);
        WorkCompletion send = poll();
        assertEquals(2, send.wrId());
        WorkCompletion inv = poll();
        assertEquals(3, inv.wrId());
        assertEquals(WcStatus.SUCCESS, inv.status());
        assertFalse(key.valid, "invalidated once the SEND completed");
        mw.close();
    }

    // ---------------------------------------------------------------- responder side

    @Test
    void type2WindowDoesNotFollowItsQpNumberToANewQp() {
        MemoryWindow mw = track(pd.allocMw(MwType.TYPE_2));
        int rkey = mw.nextRkey();
        qp.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED)
                .bindMw(mw, rkey, mr, mr.address(), 256, Access.REMOTE_WRITE));
        assertEquals(WcStatus.SUCCESS, poll().status());
        injectWriteOnly(qp, 0, mr.address(), rkey, 16);
        List<Sent> ok = takeSent();
        assertEquals(1, ok.size(), ok::toString);
        assertTrue(Aeth.isAck(ok.get(0).syndrome()), "the window works through its QP: " + ok);
        int qpn = qp.qpn();
        qp.close();
        hca.nextQpnHint(qpn);
        qp = newQp();
        assertEquals(qpn, qp.qpn(), "the new QP has the old QP's number");
        injectWriteOnly(qp, 0, mr.address(), rkey, 16);
        List<Sent> refused = takeSent();
        assertEquals(1, refused.size(), refused::toString);
        assertEquals(Aeth.NAK_REMOTE_ACCESS, refused.get(0).syndrome(), "a new QP with the same number: " + refused);
        qp.close();
        mw.close();
    }

    /** rxe read_reply: a READ re-requested from the middle continues with MIDDLE/LAST responses. */
    @Test
    void readReRequestedFromTheMiddleIsAnsweredWithMiddleAndLast() {
        long va = mr.address();
        injectRead(qp, 0, va, mr.rkey(), 3 * MTU);
        assertSent(takeSent(), Opcode.RC_RDMA_READ_RESPONSE_FIRST, 0, Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, 1,
                Opcode.RC_RDMA_READ_RESPONSE_LAST, 2);
        injectRead(qp, 1, va + MTU, mr.rkey(), 2 * MTU);
        assertSent(takeSent(), Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, 1, Opcode.RC_RDMA_READ_RESPONSE_LAST, 2);
        injectRead(qp, 2, va + 2 * MTU, mr.rkey(), MTU);
        assertSent(takeSent(), Opcode.RC_RDMA_READ_RESPONSE_LAST, 2);
        injectRead(qp, 0, va, mr.rkey(), 3 * MTU);
        assertSent(takeSent(), Opcode.RC_RDMA_READ_RESPONSE_FIRST, 0, Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, 1,
                Opcode.RC_RDMA_READ_RESPONSE_LAST, 2);
    }

    /** rxe duplicate_request: a duplicate READ must name the same rkey and lie inside the original. */
    @Test
    void duplicateReadDifferentFromTheOriginalIsDropped() {
        long va = mr.address();
        MemoryRegion other = track(pd.regMr(arena.allocate(4 * MTU, 8), Access.LOCAL_WRITE | Access.REMOTE_READ));
        injectRead(qp, 0, va, mr.rkey(), 2 * MTU);
        assertEquals(2, takeSent().size());
        injectRead(qp, 0, va + 2 * MTU, mr.rkey(), 2 * MTU); // same PSN, other bytes of the same MR
        injectRead(qp, 0, va, mr.rkey(), 3 * MTU); // longer than the original
        injectRead(qp, 0, other.address(), other.rkey(), 2 * MTU); // another MR
        assertSent(takeSent());
        assertEquals(3, ctx.counters(1).get("duplicate_request"));
        injectRead(qp, 1, va + MTU, mr.rkey(), MTU); // a part of the original: answered
        assertSent(takeSent(), Opcode.RC_RDMA_READ_RESPONSE_LAST, 1);
        other.close();
    }

    /** rxe checks the rkey (check_rkey) before the alignment (atomic_reply). */
    @Test
    void misalignedAtomicWithABadRkeyIsRemoteAccessError() {
        int op = Opcode.RC_FETCH_ADD;
        inject(qp, op, 0, b -> new AtomicEth().wrap(b, Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ETH))
                .virtualAddress(mr.address() + 4).rkey(mr.rkey() ^ 0x100).swapAdd(1).compare(0), 0);
        List<Sent> got = takeSent();
        assertEquals(1, got.size(), got::toString);
        assertEquals(Aeth.NAK_REMOTE_ACCESS, got.get(0).syndrome());
    }

    @Test
    void misalignedAtomicWithAGoodRkeyIsInvalidRequest() {
        int op = Opcode.RC_FETCH_ADD;
        inject(qp, op, 0, b -> new AtomicEth().wrap(b, Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ETH))
                .virtualAddress(mr.address() + 4).rkey(mr.rkey()).swapAdd(1).compare(0), 0);
        List<Sent> got = takeSent();
        assertEquals(1, got.size(), got::toString);
        assertEquals(Aeth.NAK_INVALID_REQUEST, got.get(0).syndrome());
    }

    /** rxe check_length: a RETH DMA length above 2^31 is an invalid request, whatever the key. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void rethLengthAbove2To31IsInvalidRequest(boolean write) {
        int length = 0x80000001;
        if (write) {
            int op = Opcode.RC_RDMA_WRITE_FIRST;
            inject(qp, op, 0, b -> new Reth().wrap(b, Opcode.offsetOf(op, Opcode.HEADER_RETH))
                    .virtualAddress(mr.address()).rkey(mr.rkey()).dmaLength(length), MTU);
        } else {
            injectRead(qp, 0, mr.address(), mr.rkey(), length);
        }
        List<Sent> got = takeSent();
        assertEquals(1, got.size(), got::toString);
        assertEquals(Aeth.NAK_INVALID_REQUEST, got.get(0).syndrome());
    }

    /** rxe do_complete: a class C error in the middle of a SEND completes its receive with the error. */
    @Test
    void errorInTheMiddleOfASendCompletesTheHeldReceiveWithTheErrorStatus() {
        qp.postRecv(new RecvWorkRequest().wrId(40).sge(mr, 0, 3 * MTU));
        qp.postRecv(new RecvWorkRequest().wrId(41).sge(mr, 0, 3 * MTU));
        inject(qp, Opcode.RC_SEND_FIRST, 0, b -> { }, MTU);
        int op = Opcode.RC_RDMA_WRITE_FIRST; // the SEND never ends: a bad opcode sequence
        inject(qp, op, 1, b -> new Reth().wrap(b, Opcode.offsetOf(op, Opcode.HEADER_RETH))
                .virtualAddress(mr.address()).rkey(mr.rkey()).dmaLength(2 * MTU), MTU);
        List<Sent> got = takeSent();
        assertEquals(Aeth.NAK_INVALID_REQUEST, got.get(got.size() - 1).syndrome(), got::toString);
        WorkCompletion held = poll();
        assertEquals(40, held.wrId());
        assertEquals(WcStatus.REM_INV_REQ_ERR, held.status());
        WorkCompletion flushed = poll();
        assertEquals(41, flushed.wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
    }
    /**
     * rxe runs check_resource before check_length: a new SEND too long for the path MTU takes its receive
     * first, which completes REM_INV_REQ_ERR (not flushed), and the requester is NAKed "invalid request".
     */
    @Test
    void sendLongerThanThePathMtuCompletesItsReceiveWithRemoteInvalidRequest() {
        qp.postRecv(new RecvWorkRequest().wrId(50).sge(mr, 0, 2 * MTU));
        qp.postRecv(new RecvWorkRequest().wrId(51).sge(mr, 0, 2 * MTU));
        inject(qp, Opcode.RC_SEND_ONLY, 0, b -> { }, MTU + 4);
        List<Sent> got = takeSent();
        assertEquals(1, got.size(), got::toString);
        assertEquals(Aeth.NAK_INVALID_REQUEST, got.get(0).syndrome());
        WorkCompletion taken = poll();
        assertEquals(50, taken.wrId());
        assertEquals(WcStatus.REM_INV_REQ_ERR, taken.status());
        WorkCompletion flushed = poll();
        assertEquals(51, flushed.wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
        assertEquals(QpState.ERR, qp.query().qpState);
    }

    /** ...and with no receive posted it is RNR NAKed like any SEND (the length is not looked at yet). */
    @Test
    void sendLongerThanThePathMtuWithoutAReceiveIsRnrNaked() {
        inject(qp, Opcode.RC_SEND_ONLY, 0, b -> { }, MTU + 4);
        List<Sent> got = takeSent();
        assertEquals(1, got.size(), got::toString);
        assertTrue(Aeth.isRnrNak(got.get(0).syndrome()), got::toString);
        assertEquals(QpState.RTS, qp.query().qpState);
    }
}
