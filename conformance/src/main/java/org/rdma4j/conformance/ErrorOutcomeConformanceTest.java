// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, "Error outcomes": every row of the table that the verbs API can provoke, then the
 * flush: after an error the QP is in ERR, everything outstanding and everything posted later
 * completes with WR_FLUSH_ERR, and a reset brings it back.
 */
@Rule({"S-ERR-1", "S-ERR-2", "S-ERR-3", "S-ERR-4", "S-ERR-5", "S-ERR-6", "S-ERR-7", "S-ERR-8", "S-ERR-9", "S-LIFE-1"})
public class ErrorOutcomeConformanceTest extends AbstractDataPathTest {
    private static final long TARGET_OFF = 64;

    /** The three remote operations. */
    public enum Op { WRITE, READ, ATOMIC }

    /** What is wrong with the remote side of a request (row 1 of the table). */
    public enum RemoteFault { BAD_RKEY, NO_ACCESS_RIGHT, PAST_THE_END, BEFORE_THE_START, WRONG_PD }

    /** What is wrong with a local scatter/gather entry (rows 6 and 7). */
    public enum LocalFault { BAD_LKEY, PAST_THE_END, OTHER_PD, NO_LOCAL_WRITE }

    private static int accessBit(Op op) {
        return switch (op) {
            case WRITE -> Access.REMOTE_WRITE;
            case READ -> Access.REMOTE_READ;
            case ATOMIC -> Access.REMOTE_ATOMIC;
        };
    }

    /** A key that names no registered memory: the key of a region registered and deregistered. */
    private int deadKey(ProtectionDomain pd, boolean rkey) {
        MemoryRegion gone = pd.regMr(allocate(PAGE_SIZE), MR_ALL);
        int k = rkey ? gone.rkey() : gone.lkey();
        gone.close();
        return k;
    }

    /** Posts {@code op} from A: 16 bytes (8 for atomics) between {@code local} at 0 and {@code remoteAddr}. */
    private void postOp(QpPair p, long wrId, Op op, MemoryRegion local, long localAddr, int lkey,
                        long remoteAddr, int rkey) {
        if (op == Op.ATOMIC) {
            assumeAtomics();
        }
        SendWorkRequest w = new SendWorkRequest().wrId(wrId).flags(SendFlag.SIGNALED);
        switch (op) {
            case WRITE -> w.opcode(WrOpcode.RDMA_WRITE).sge(localAddr, 16, lkey).rdma(remoteAddr, rkey);
            case READ -> w.opcode(WrOpcode.RDMA_READ).sge(localAddr, 16, lkey).rdma(remoteAddr, rkey);
            case ATOMIC -> w.sge(localAddr, 8, lkey).fetchAdd(remoteAddr, rkey, 1);
        }
        p.a().qp().postSend(w);
    }

    // ---------------------------------------------------------------- row 1: REM_ACCESS_ERR

    static Stream<Arguments> remoteFaults() {
        List<Arguments> l = new ArrayList<>();
        for (Op op : Op.values()) {
            for (RemoteFault f : RemoteFault.values()) {
                l.add(Arguments.of(op, f));
            }
        }
        return l.stream();
    }

    @Rule("S-ERR-1")
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("remoteFaults")
    void remoteAccessViolationCompletesWithRemAccessErrAndResponderGoesToErr(Op op, RemoteFault fault) {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        ProtectionDomain pd = fault == RemoteFault.WRONG_PD ? allocPd(p.b().ctx()) : p.b().pd();
        int access = fault == RemoteFault.NO_ACCESS_RIGHT ? MR_ALL & ~accessBit(op) : MR_ALL;
        MemoryRegion target = register(pd, PAGE_SIZE, access);
        int rkey = fault == RemoteFault.BAD_RKEY ? deadKey(p.b().pd(), true) : target.rkey();
        long remote = switch (fault) {
            case PAST_THE_END -> op == Op.ATOMIC ? addr(target, PAGE_SIZE) : addr(target, PAGE_SIZE - 8);
            case BEFORE_THE_START -> target.address() - 8;
            default -> addr(target, TARGET_OFF);
        };
        postOp(p, 1, op, local, addr(local, 0), local.lkey(), remote, rkey);
        expect(p.a().sendCq(), 1, WcStatus.REM_ACCESS_ERR);
        awaitQpState(p.b().qp(), QpState.ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        assertGuardAround(target, 0, 0, "target of a refused " + op);
        assertGuard(local.segment(), 0, local.length(), "local buffer of a failed " + op);
    }

    // ---------------------------------------------------------------- row 2: REM_INV_REQ_ERR

    @Rule("S-ERR-2")
    @ParameterizedTest
    @EnumSource(Op.class)
    void operationTheResponderQpDoesNotAllowCompletesWithRemInvReqErr(Op op) {
        QpPair p = connect(spec(QpType.RC).accessB(QP_ALL & ~accessBit(op)));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        postOp(p, 1, op, local, addr(local, 0), local.lkey(), addr(target, TARGET_OFF), target.rkey());
        expect(p.a().sendCq(), 1, WcStatus.REM_INV_REQ_ERR);
        awaitQpState(p.b().qp(), QpState.ERR);
        assertGuardAround(target, 0, 0, "target of a refused " + op);
    }

    @Rule("S-ERR-4")
    @Test
    void sendLongerThanTheReceiveBufferIsRemoteInvalidRequestAndLocalLengthError() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 64);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 200));
        WorkCompletion s = pollOne(p.a().sendCq());
        assertEquals(2, s.wrId());
        // SEMANTICS.md: a receive WQE too short for the SEND is an Invalid Request NAK (rxe: ERR_LENGTH).
        assumeNakNotLost(s, WcStatus.REM_INV_REQ_ERR);
        assertEquals(WcStatus.REM_INV_REQ_ERR, s.status(), s::toString);
        expect(p.b().recvCq(), 1, WcStatus.LOC_LEN_ERR);
        awaitQpState(p.b().qp(), QpState.ERR);
    }

    /** max_dest_rd_atomic 0: the responder has no resources for READs or atomics (rxe: NAK invalid request). */
    @Rule("S-ERR-2")
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void readOrAtomicWithoutResponderResourcesIsRemoteInvalidRequest(boolean atomic) {
        if (atomic) {
            assumeAtomics();
        }
        QpPair p = connect(spec(QpType.RC).maxDestRdAtomic(0));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion remote = register(p.b(), PAGE_SIZE, MR_ALL);
        putLong(remote, 64, 5);
        SendWorkRequest w = atomic
                ? new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).fetchAdd(addr(remote, 64), remote.rkey(), 1)
                        .sge(local, 0, 8)
                : wr(1, WrOpcode.RDMA_READ).sge(local, 0, 64).rdma(addr(remote, 0), remote.rkey());
        p.a().qp().postSend(w);
        expect(p.a().sendCq(), 1, WcStatus.REM_INV_REQ_ERR);
        awaitQpState(p.b().qp(), QpState.ERR);
        assertEquals(5, getLong(remote, 64), "the atomic did not run");
    }

    // ---------------------------------------------------------------- row 3: REM_OP_ERR

    @Rule("S-ERR-3")
    @Test
    void receiveWithABadLkeyFailsWithRemOpErrAndLocQpOpErr() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        int bad = deadKey(p.b().pd(), false);
        p.b().qp().postRecv(new RecvWorkRequest().wrId(1).sge(dst.address(), 64, bad));
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 32));
        expect(p.a().sendCq(), 2, WcStatus.REM_OP_ERR);
        expect(p.b().recvCq(), 1, WcStatus.LOC_QP_OP_ERR);
        awaitQpState(p.b().qp(), QpState.ERR);
        assertGuardAround(dst, 0, 0, "memory behind a bad lkey");
    }

    // ---------------------------------------------------------------- row 4: RNR

    @Rule("S-ERR-5")
    @ParameterizedTest
    @ValueSource(ints = {0, 1})
    void noReceivePostedExhaustsRnrRetries(int rnrRetry) {
        QpPair p = connect(spec(QpType.RC).rnrRetry(rnrRetry).minRnrTimerB(1));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 32));
        expect(p.a().sendCq(), 1, WcStatus.RNR_RETRY_EXC_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        assertQpState(p.b().qp(), QpState.RTS); // an RNR NAK is not an error for the responder
    }

    @Rule("S-ERR-5")
    @Test
    void rnrRetriesUntilAReceiveIsPosted() {
        QpPair p = connect(spec(QpType.RC).rnrRetry(7).minRnrTimerB(1));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, 300, 99);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 300));
        assertNoCompletion(p.a().sendCq(), "the SEND waits while the receiver is not ready");
        postRecv(p.b(), 2, dst, 0, 300);
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
        expect(p.b().recvCq(), 2, WcOpcode.RECV);
        assertPattern(dst.segment(), 0, 300, 99, "message delivered after RNR");
    }

    // ---------------------------------------------------------------- row 5: retry exhausted

    @Rule("S-ERR-6")
    @ParameterizedTest
    @EnumSource(value = QpState.class, names = {"ERR", "RESET"})
    void peerThatNeverAnswersExhaustsRetries(QpState peerState) {
        QpPair p = connect(spec(QpType.RC).timeout(4).retryCnt(1));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        QpBringUp.to(p.b().qp(), peerState);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 64).rdma(addr(dst, 0), dst.rkey()));
        expect(p.a().sendCq(), 1, WcStatus.RETRY_EXC_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        assertGuardAround(dst, 0, 0, "memory of a peer that was not listening");
    }

    // ---------------------------------------------------------------- rows 6 and 7: LOC_PROT_ERR

    static Stream<Arguments> gatherFaults() {
        List<Arguments> l = new ArrayList<>();
        for (WrOpcode op : new WrOpcode[] {WrOpcode.SEND, WrOpcode.RDMA_WRITE}) {
            for (LocalFault f : new LocalFault[] {LocalFault.BAD_LKEY, LocalFault.PAST_THE_END, LocalFault.OTHER_PD}) {
                l.add(Arguments.of(op, f));
            }
        }
        return l.stream();
    }

    /** The local address and lkey of a 16-byte entry with {@code fault}. */
    private long[] localEntry(QpPair p, MemoryRegion local, LocalFault fault) {
        return switch (fault) {
            case BAD_LKEY -> new long[] {addr(local, 0), deadKey(p.a().pd(), false)};
            case PAST_THE_END -> new long[] {addr(local, PAGE_SIZE - 4), local.lkey()}; // 8 or 16 bytes: over the end
            case OTHER_PD -> {
                MemoryRegion foreign = register(allocPd(p.a().ctx()), PAGE_SIZE, MR_ALL);
                yield new long[] {addr(foreign, 0), foreign.lkey()};
            }
            case NO_LOCAL_WRITE -> {
                MemoryRegion ro = register(p.a(), PAGE_SIZE, Access.REMOTE_READ);
                yield new long[] {addr(ro, 0), ro.lkey()};
            }
        };
    }

    @Rule("S-ERR-7")
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("gatherFaults")
    void invalidLocalGatherCompletesWithLocProtErr(WrOpcode op, LocalFault fault) {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        postRecv(p.b(), 50, target, 2048, 256);
        long[] e = localEntry(p, local, fault);
        p.a().qp().postSend(remoteUnlessSend(wr(1, op).sge(e[0], 16, (int) e[1]), addr(target, TARGET_OFF), target.rkey()));
        expect(p.a().sendCq(), 1, WcStatus.LOC_PROT_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        assertGuardAround(target, 0, 0, "nothing may reach the responder");
    }

    static Stream<Arguments> scatterFaults() {
        List<Arguments> l = new ArrayList<>();
        for (Op op : new Op[] {Op.READ, Op.ATOMIC}) {
            for (LocalFault f : LocalFault.values()) {
                l.add(Arguments.of(op, f));
            }
        }
        return l.stream();
    }

    @Rule("S-ERR-8")
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("scatterFaults")
    void responseIntoAnInvalidLocalBufferCompletesWithLocProtErr(Op op, LocalFault fault) {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        putLong(target, TARGET_OFF, 5);
        long[] e = localEntry(p, local, fault);
        postOp(p, 1, op, local, e[0], (int) e[1], addr(target, TARGET_OFF), target.rkey());
        expect(p.a().sendCq(), 1, WcStatus.LOC_PROT_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        if (op == Op.ATOMIC) {
            assertEquals(6, getLong(target, TARGET_OFF), "the remote atomic still ran");
        }
    }

    // ---------------------------------------------------------------- memory freed under a registration

    /** How long an outcome may take that must not wait for a retransmission (the ACK timeout is 4 s). */
    private static final long PROMPT_MS = 3_000;
    private static final String PROMPT = "an outcome at once: on a lossy link a lost packet waits out the 4.3 s ACK timeout";

    /** RC with a 4.3 s ACK timeout: an outcome within {@link #PROMPT_MS} was not reached by retrying. */
    private PairSpec noQuickRetries() {
        return spec(QpType.RC).timeout(20).retryCnt(7);
    }

    /** A page of memory from {@code own} (closing it frees the memory), registered in {@code e}'s PD. */
    private MemoryRegion registerIn(Arena own, Endpoint e) {
        MemorySegment s = own.allocate(PAGE_SIZE, PAGE_SIZE);
        s.fill(GUARD);
        return track(e.pd().regMr(s, MR_ALL));
    }

    /** After the failure: another pair on the same devices works, and the failed pair works once reset. */
    private void assertDevicesStillWork(QpPair failed) {
        sendAndCheck(connect(spec(QpType.RC)), 300, false, 21);
        reconnect(failed);
        sendAndCheck(failed, 300, true, 22);
    }

    /** An RDMA WRITE targets {@code addr}; a SEND (which has no remote buffer) goes to the posted receive. */
    private static SendWorkRequest remoteUnlessSend(SendWorkRequest w, long addr, int rkey) {
        return w.opcode() == WrOpcode.SEND ? w : w.rdma(addr, rkey);
    }

    @Rule("S-LIFE-1")
    @ParameterizedTest
    @EnumSource(value = WrOpcode.class, names = {"SEND", "RDMA_WRITE"})
    void gatherFromFreedMemoryCompletesWithLocProtErrAtOnce(WrOpcode op) {
        QpPair p = connect(noQuickRetries());
        Arena own = Arena.ofShared();
        MemoryRegion src = registerIn(own, p.a());
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        postRecv(p.b(), 50, target, 2048, 256);
        own.close();
        p.a().qp().postSend(remoteUnlessSend(wr(1, op).sge(src, 0, 16), addr(target, TARGET_OFF), target.rkey()));
        WorkCompletion wc = pollOne(p.a().sendCq(), PROMPT_MS);
        assertEquals(WcStatus.LOC_PROT_ERR, wc.status(), wc::toString);
        awaitQpState(p.a().qp(), QpState.ERR);
        assertGuardAround(target, 0, 0, "nothing may reach the responder");
        assertNoCompletion(p.b().recvCq(), "the receive was not consumed");
        assertDevicesStillWork(p);
    }

    @Rule("S-LIFE-1")
    @Requires(value = Capability.RELIABLE_LINK, why = PROMPT)
    @ParameterizedTest
    @EnumSource(value = Op.class, names = {"READ", "ATOMIC"})
    void responseIntoFreedMemoryCompletesWithLocProtErrAtOnce(Op op) {
        QpPair p = connect(noQuickRetries());
        Arena own = Arena.ofShared();
        MemoryRegion local = registerIn(own, p.a());
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        putLong(target, TARGET_OFF, 5);
        own.close();
        postOp(p, 1, op, local, local.address(), local.lkey(), addr(target, TARGET_OFF), target.rkey());
        WorkCompletion wc = pollOne(p.a().sendCq(), PROMPT_MS);
        assertEquals(WcStatus.LOC_PROT_ERR, wc.status(), wc::toString);
        awaitQpState(p.a().qp(), QpState.ERR);
        if (op == Op.ATOMIC) {
            assertEquals(6, getLong(target, TARGET_OFF), "the remote atomic still ran");
        }
        assertDevicesStillWork(p);
    }

    @Rule("S-LIFE-1")
    @Requires(value = Capability.RELIABLE_LINK, why = PROMPT)
    @ParameterizedTest
    @EnumSource(Op.class)
    void remoteMemoryFreedUnderItsRegistrationIsARemoteAccessErrorAtOnce(Op op) {
        QpPair p = connect(noQuickRetries());
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        Arena own = Arena.ofShared();
        MemoryRegion target = registerIn(own, p.b());
        own.close();
        postOp(p, 1, op, local, addr(local, 0), local.lkey(), addr(target, TARGET_OFF), target.rkey());
        WorkCompletion wc = pollOne(p.a().sendCq(), PROMPT_MS);
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
        awaitQpState(p.b().qp(), QpState.ERR);
        assertGuard(local.segment(), 0, local.length(), "local buffer of a failed " + op);
        assertDevicesStillWork(p);
    }

    @Rule("S-LIFE-1")
    @Requires(value = Capability.RELIABLE_LINK, why = PROMPT)
    @Test
    void receiveIntoFreedMemoryFailsLikeABadLkeyAtOnce() {
        QpPair p = connect(noQuickRetries());
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        Arena own = Arena.ofShared();
        MemoryRegion dst = registerIn(own, p.b());
        postRecv(p.b(), 1, dst, 0, 256);
        own.close();
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 32));
        WorkCompletion wc = pollOne(p.a().sendCq(), PROMPT_MS);
        assertEquals(WcStatus.REM_OP_ERR, wc.status(), wc::toString);
        expect(p.b().recvCq(), 1, WcStatus.LOC_QP_OP_ERR);
        awaitQpState(p.b().qp(), QpState.ERR);
        assertDevicesStillWork(p);
    }

    // ---------------------------------------------------------------- flush

    @Rule("S-ERR-9")
    @Test
    void afterAnErrorEveryOutstandingAndLaterRequestIsFlushed() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        postRecv(p.a(), 50, local, 2048, 64);
        postRecv(p.a(), 51, local, 2112, 64);
        SendWorkRequest w1 = wr(1, WrOpcode.RDMA_WRITE).sge(local, 0, 16).rdma(addr(target, 0), target.rkey() ^ 0x00FFFF00);
        SendWorkRequest w2 = wr(2, WrOpcode.SEND).sge(local, 0, 16);
        SendWorkRequest w3 = new SendWorkRequest().wrId(3).opcode(WrOpcode.RDMA_WRITE).flags(0).sge(local, 0, 16)
                .rdma(addr(target, 0), target.rkey());
        SendWorkRequest w4 = wr(4, WrOpcode.RDMA_READ).sge(local, 512, 16).rdma(addr(target, 0), target.rkey());
        w1.next(w2);
        w2.next(w3);
        w3.next(w4);
        p.a().qp().postSend(w1);
        expect(p.a().sendCq(), 1, WcStatus.REM_ACCESS_ERR);
        for (long id = 2; id <= 4; id++) {
            WorkCompletion wc = expect(p.a().sendCq(), id, WcStatus.WR_FLUSH_ERR);
            assertEquals(p.a().qpn(), wc.qpNum(), "qp_num of a flushed completion");
        }
        expect(p.a().recvCq(), 50, WcStatus.WR_FLUSH_ERR);
        expect(p.a().recvCq(), 51, WcStatus.WR_FLUSH_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);

        p.a().qp().postSend(wr(5, WrOpcode.SEND).sge(local, 0, 16));
        expect(p.a().sendCq(), 5, WcStatus.WR_FLUSH_ERR);
        postRecv(p.a(), 52, local, 2176, 64);
        expect(p.a().recvCq(), 52, WcStatus.WR_FLUSH_ERR);
        assertGuardAround(target, 0, 0, "no flushed request may execute");
    }

    @Rule("S-ERR-9")
    @Test
    void responderErrorFlushesTheResponderReceives() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 3; i++) {
            postRecv(p.b(), 60 + i, target, 1024 + 64L * i, 64);
        }
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(local, 0, 16).rdma(addr(target, 0), target.rkey() ^ 0x00FFFF00));
        expect(p.a().sendCq(), 1, WcStatus.REM_ACCESS_ERR);
        for (int i = 0; i < 3; i++) {
            expect(p.b().recvCq(), 60 + i, WcStatus.WR_FLUSH_ERR);
        }
        awaitQpState(p.b().qp(), QpState.ERR);
    }

    @Rule("S-ERR-9")
    @Test
    void modifyToErrFlushesPostedReceivesInOrder() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 5; i++) {
            postRecv(p.b(), 10 + i, dst, 64L * i, 64);
        }
        QpBringUp.to(p.b().qp(), QpState.ERR);
        for (int i = 0; i < 5; i++) {
            WorkCompletion wc = expect(p.b().recvCq(), 10 + i, WcStatus.WR_FLUSH_ERR);
            assertEquals(p.b().qpn(), wc.qpNum());
        }
        assertNoCompletion(p.b().recvCq(), "one flush per receive");
    }

    @Rule("S-ERR-9")
    @Test
    void modifyToErrFlushesOutstandingSends() {
        QpPair p = connect(spec(QpType.RC).rnrRetry(7).minRnrTimerB(20)); // B never posts: sends stall
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 4; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, 0, 16));
        }
        QpBringUp.to(p.a().qp(), QpState.ERR);
        for (int i = 0; i < 4; i++) {
            expect(p.a().sendCq(), i, WcStatus.WR_FLUSH_ERR);
        }
    }

    @Rule("S-ERR-9")
    @Test
    void qpInErrCanBeResetAndThenWorksAgain() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion target = register(p.b(), PAGE_SIZE, MR_ALL);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(local, 0, 16).rdma(addr(target, 0), target.rkey() ^ 0x00FFFF00));
        expect(p.a().sendCq(), 1, WcStatus.REM_ACCESS_ERR);
        awaitQpState(p.a().qp(), QpState.ERR);
        awaitQpState(p.b().qp(), QpState.ERR);
        drain(p.a().sendCq(), p.a().recvCq(), p.b().sendCq(), p.b().recvCq());
        reconnect(p);
        assertQpState(p.a().qp(), QpState.RTS);
        assertQpState(p.b().qp(), QpState.RTS);
        sendAndCheck(p, 3000, false, 98);
        writeAndCheck(p, 3000, true, 97);
    }

    /** Polls every completion left on {@code cqs} for a short while. */
    private static void drain(CompletionQueue... cqs) {
        WorkCompletion[] wcs = WorkCompletion.array(16);
        long deadline = System.nanoTime() + QUIET_MS * 1_000_000L;
        while (System.nanoTime() < deadline) {
            for (CompletionQueue cq : cqs) {
                cq.poll(wcs);
            }
            Thread.yield();
        }
    }

    @Rule("S-ERR-9")
    @Test
    void errorCompletionsKeepWrIdAndQpNum() {
        QpPair p = connect(spec(QpType.RC).rnrRetry(0).minRnrTimerB(1));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        p.a().qp().postSend(wr(0xDEADBEEFCAFEL, WrOpcode.SEND).sge(src, 0, 8));
        WorkCompletion wc = expect(p.a().sendCq(), 0xDEADBEEFCAFEL, WcStatus.RNR_RETRY_EXC_ERR);
        assertEquals(p.a().qpn(), wc.qpNum(), "qp_num is valid on error completions");
    }
}
