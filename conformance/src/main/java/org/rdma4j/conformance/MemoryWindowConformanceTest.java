// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, Control path, "MW". A owns the memory and binds windows on its QP; B reaches A's
 * memory through the window's rkey.
 */
@Rule({"S-MW-1", "S-MW-2", "S-MW-3", "S-MW-4"})
public class MemoryWindowConformanceTest extends AbstractVerbsTest {
    private static final long WIN_OFF = 1024;
    private static final long WIN_LEN = 2048;
    private QpPair p;
    private MemoryRegion target;
    private MemoryRegion src;
    private MemoryRegion readBack;
    private long nextWrId = 1000;

    private void setUp() {
        p = connect(spec(QpType.RC));
        target = register(p.a(), 4 * PAGE_SIZE, MR_ALL | Access.MW_BIND);
        src = register(p.b(), PAGE_SIZE, MR_ALL);
        readBack = register(p.b(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, PAGE_SIZE, 7);
    }

    private MemoryWindow window(MwType type) {
        return track(p.a().pd().allocMw(type));
    }

    /** Binds {@code mw} over {@code [WIN_OFF, WIN_OFF + len)} of the target MR; returns the new rkey. */
    private int bind(MemoryWindow mw, long len, int access) {
        long id = nextWrId++;
        int rkey;
        if (mw.type() == MwType.TYPE_1) {
            rkey = mw.bind(p.a().qp(), id, SendFlag.SIGNALED, target, addr(target, WIN_OFF), len, access);
        } else {
            rkey = mw.nextRkey();
            p.a().qp().postSend(new SendWorkRequest().wrId(id).flags(SendFlag.SIGNALED)
                    .bindMw(mw, rkey, target, addr(target, WIN_OFF), len, access));
        }
        expect(p.a().sendCq(), id, WcOpcode.BIND_MW);
        assertEquals(rkey, mw.rkey(), "rkey() after the bind");
        return rkey;
    }

    /** B writes {@code len} bytes of its pattern to {@code off} in A's target MR through {@code rkey}. */
    private WorkCompletion writeFromB(int rkey, long off, int len) {
        long id = nextWrId++;
        p.b().qp().postSend(wr(id, WrOpcode.RDMA_WRITE).sge(src, 0, len).rdma(addr(target, off), rkey));
        WorkCompletion wc = pollOne(p.b().sendCq());
        assertEquals(id, wc.wrId(), wc::toString);
        return wc;
    }

    private void assertWriteWorks(int rkey) {
        WorkCompletion wc = writeFromB(rkey, WIN_OFF + 16, 100);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertPattern(target.segment(), WIN_OFF + 16, 100, 7, "written through the window");
    }

    private void assertWriteRefused(int rkey, long off, String why) {
        WorkCompletion wc = writeFromB(rkey, off, 64);
        assumeNakNotLost(wc, WcStatus.REM_ACCESS_ERR);
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), () -> why + ": " + wc);
    }

    @Test
    void allocOfType3FailsEinval() {
        ProtectionDomain pd = allocPd(ctx);
        assertErrno(Errno.EINVAL, () -> track(pd.allocMw(3)));
        assertErrno(Errno.EINVAL, () -> track(pd.allocMw(0)));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void allocOfType1And2Works(int type) {
        ProtectionDomain pd = allocPd(ctx);
        MemoryWindow mw = track(pd.allocMw(type));
        assertEquals(type, mw.type().value());
        assertSame(pd, mw.pd());
        assertNotEquals(mw.rkey(), mw.nextRkey());
    }

    @ParameterizedTest
    @EnumSource(MwType.class)
    void boundWindowGrantsRemoteWrite(MwType type) {
        setUp();
        int rkey = bind(window(type), WIN_LEN, Access.REMOTE_WRITE);
        assertWriteWorks(rkey);
        assertGuard(target.segment(), 0, WIN_OFF + 16, "before the write");
        assertGuard(target.segment(), WIN_OFF + 116, target.length(), "after the write");
    }

    @ParameterizedTest
    @EnumSource(MwType.class)
    void boundWindowGrantsRemoteRead(MwType type) {
        setUp();
        fillPattern(target.segment(), WIN_OFF, WIN_LEN, 9);
        int rkey = bind(window(type), WIN_LEN, Access.REMOTE_READ);
        p.b().qp().postSend(wr(1, WrOpcode.RDMA_READ).sge(readBack, 0, (int) WIN_LEN).rdma(addr(target, WIN_OFF), rkey));
        expect(p.b().sendCq(), 1, WcOpcode.RDMA_READ);
        assertPattern(readBack.segment(), 0, WIN_LEN, 9, "read through the window");
    }

    @ParameterizedTest
    @EnumSource(MwType.class)
    void accessOutsideTheWindowFailsRemAccessErr(MwType type) {
        setUp();
        int rkey = bind(window(type), WIN_LEN, Access.REMOTE_WRITE);
        assertWriteRefused(rkey, WIN_OFF - 512, "inside the MR but before the window");
        assertGuardAround(target, 0, 0, "target memory");
    }

    @ParameterizedTest
    @EnumSource(MwType.class)
    void windowBoundWithLocalWriteOnlyCannotBeWrittenRemotely(MwType type) {
        setUp();
        int rkey = bind(window(type), WIN_LEN, Access.LOCAL_WRITE);
        assertWriteRefused(rkey, WIN_OFF, "window grants no remote write");
        assertGuardAround(target, 0, 0, "target memory");
    }

    @Test
    void type1RebindWithLengthZeroRevokesIt() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_1);
        int rkey = bind(mw, WIN_LEN, Access.REMOTE_WRITE);
        assertWriteWorks(rkey);
        int unbound = bind(mw, 0, 0);
        assertNotEquals(rkey, unbound, "every bind changes the rkey");
        assertWriteRefused(rkey, WIN_OFF, "old rkey after a zero-length rebind");
    }

    @Test
    void type2LocalInvalidateRevokesIt() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        int rkey = bind(mw, WIN_LEN, Access.REMOTE_WRITE);
        assertWriteWorks(rkey);
        p.a().qp().postSend(new SendWorkRequest().wrId(77).flags(SendFlag.SIGNALED).localInvalidate(rkey));
        expect(p.a().sendCq(), 77, WcOpcode.LOCAL_INV);
        assertWriteRefused(rkey, WIN_OFF, "rkey after LOCAL_INV");
    }

    @Test
    void type2SendWithInvalidateFromThePeerRevokesIt() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        int rkey = bind(mw, WIN_LEN, Access.REMOTE_WRITE);
        assertWriteWorks(rkey);
        postRecv(p.a(), 300, target, 3 * PAGE_SIZE, 256);
        p.b().qp().postSend(wr(78, WrOpcode.SEND_WITH_INV).invalidateRkey(rkey).sge(src, 0, 32));
        expect(p.b().sendCq(), 78, WcOpcode.SEND);
        WorkCompletion rc = expect(p.a().recvCq(), 300, WcOpcode.RECV);
        assertTrue((rc.wcFlags() & WcFlag.WITH_INV) != 0, "receive completion has WITH_INV: " + rc);
        assertEquals(rkey, rc.invalidatedRkey(), "invalidated rkey");
        assertEquals(32, rc.byteLen());
        assertWriteRefused(rkey, WIN_OFF, "rkey after SEND_WITH_INV");
    }

    @ParameterizedTest
    @EnumSource(MwType.class)
    void deallocRevokesIt(MwType type) {
        setUp();
        MemoryWindow mw = window(type);
        int rkey = bind(mw, WIN_LEN, Access.REMOTE_WRITE);
        assertWriteWorks(rkey);
        mw.close();
        assertWriteRefused(rkey, WIN_OFF, "rkey of a deallocated window");
    }

    @Test
    void type1BindVerbOnType2WindowFailsEinval() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        assertErrno(Errno.EINVAL, () -> mw.bind(p.a().qp(), 1, SendFlag.SIGNALED, target, addr(target, WIN_OFF),
                WIN_LEN, Access.REMOTE_WRITE));
    }

    @ParameterizedTest
    @EnumSource(MwType.class)
    void bindToMrWithoutMwBindAccessCompletesWithMwBindErr(MwType type) {
        setUp();
        MemoryRegion plain = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryWindow mw = window(type);
        if (type == MwType.TYPE_1) {
            mw.bind(p.a().qp(), 5, SendFlag.SIGNALED, plain, plain.address(), 64, Access.REMOTE_WRITE);
        } else {
            p.a().qp().postSend(new SendWorkRequest().wrId(5).flags(SendFlag.SIGNALED)
                    .bindMw(mw, mw.nextRkey(), plain, plain.address(), 64, Access.REMOTE_WRITE));
        }
        expect(p.a().sendCq(), 5, WcStatus.MW_BIND_ERR);
    }

    /** What an invalidation may not touch: a plain MR from reg_mr, or a type-1 window. */
    enum NotInvalidatable { PLAIN_MR, TYPE1_WINDOW }

    /** The rkey of {@code what} over the target, after checking that it grants remote write. */
    private int notInvalidatableKey(NotInvalidatable what) {
        int rkey = what == NotInvalidatable.PLAIN_MR ? target.rkey()
                : bind(window(MwType.TYPE_1), WIN_LEN, Access.REMOTE_WRITE);
        assertWriteWorks(rkey);
        return rkey;
    }

    /** After an error: both QPs back to RTS; a remote WRITE through {@code rkey} still lands. */
    private void assertStillValidAfterReconnect(int rkey, String what) {
        reconnect(p);
        long id = nextWrId++;
        fillPattern(src.segment(), 0, 100, 11);
        p.b().qp().postSend(wr(id, WrOpcode.RDMA_WRITE).sge(src, 0, 100).rdma(addr(target, WIN_OFF + 200), rkey));
        WorkCompletion wc = pollOne(p.b().sendCq());
        assertEquals(WcStatus.SUCCESS, wc.status(), () -> what + " must stay valid: " + wc);
        assertPattern(target.segment(), WIN_OFF + 200, 100, 11, what + " written after the failed invalidation");
    }

    @ParameterizedTest
    @EnumSource(NotInvalidatable.class)
    void sendWithInvalidateOfPlainMrOrType1WindowIsRemoteInvalidRequestAndKeyStaysValid(NotInvalidatable what) {
        setUp();
        int rkey = notInvalidatableKey(what);
        postRecv(p.a(), 300, target, 3 * PAGE_SIZE, 256);
        p.b().qp().postSend(wr(79, WrOpcode.SEND_WITH_INV).invalidateRkey(rkey).sge(src, 0, 32));
        expect(p.b().sendCq(), 79, WcStatus.REM_INV_REQ_ERR);
        WorkCompletion rc = expect(p.a().recvCq(), 300, WcStatus.REM_INV_REQ_ERR);
        assertEquals(0, rc.wcFlags() & WcFlag.WITH_INV, () -> "nothing was invalidated: " + rc);
        awaitQpState(p.a().qp(), org.rdma4j.verbs.QpState.ERR);
        assertStillValidAfterReconnect(rkey, what.toString());
    }

    @ParameterizedTest
    @EnumSource(NotInvalidatable.class)
    void localInvalidateOfPlainMrOrType1WindowFailsLocQpOpErrAndKeyStaysValid(NotInvalidatable what) {
        setUp();
        int rkey = notInvalidatableKey(what);
        p.a().qp().postSend(new SendWorkRequest().wrId(81).flags(SendFlag.SIGNALED).localInvalidate(rkey));
        expect(p.a().sendCq(), 81, WcStatus.LOC_QP_OP_ERR);
        awaitQpState(p.a().qp(), org.rdma4j.verbs.QpState.ERR);
        assertStillValidAfterReconnect(rkey, what.toString());
    }

    /** Posts a BIND_MW of {@code mw} over the window range of the target MR and expects MW_BIND_ERR. */
    private void assertBindFails(MemoryWindow mw, int rkey, long len, int access, String why) {
        assertBindFails(mw, rkey, target, len, access, why);
    }

    /** The same over region {@code mr}. */
    private void assertBindFails(MemoryWindow mw, int rkey, MemoryRegion mr, long len, int access, String why) {
        long id = nextWrId++;
        if (mw.type() == MwType.TYPE_1) {
            mw.bind(p.a().qp(), id, SendFlag.SIGNALED, mr, addr(mr, WIN_OFF), len, access);
        } else {
            p.a().qp().postSend(new SendWorkRequest().wrId(id).flags(SendFlag.SIGNALED)
                    .bindMw(mw, rkey, mr, addr(mr, WIN_OFF), len, access));
        }
        WorkCompletion wc = pollOne(p.a().sendCq());
        assertEquals(id, wc.wrId(), wc::toString);
        assertEquals(WcStatus.MW_BIND_ERR, wc.status(), () -> why + ": " + wc);
    }

    /** rxe_check_bind_mw: access bits a window cannot carry fail the bind. */
    @Test
    void type2BindWithUnknownAccessBitsCompletesWithMwBindErr() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        assertBindFails(mw, mw.nextRkey(), WIN_LEN, Access.REMOTE_WRITE | 1 << 29, "unknown access bit 29");
    }

    /** C10-74: a window granting remote write or atomics needs a region registered with LOCAL_WRITE. */
    @Test
    void writableWindowOnARegionWithoutLocalWriteCompletesWithMwBindErr() {
        setUp();
        MemoryRegion readOnly = register(p.a(), 4 * PAGE_SIZE, Access.REMOTE_READ | Access.MW_BIND);
        MemoryWindow mw = window(MwType.TYPE_2);
        assertBindFails(mw, mw.nextRkey(), readOnly, WIN_LEN, Access.REMOTE_WRITE,
                "REMOTE_WRITE window over a region without LOCAL_WRITE");
    }

    /** o10-37.2.30: a type-2 window must be free (invalidated) before it is bound again. */
    @Test
    void type2BindOfABoundWindowCompletesWithMwBindErr() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        bind(mw, WIN_LEN, Access.REMOTE_WRITE);
        assertBindFails(mw, mw.nextRkey(), WIN_LEN, Access.REMOTE_WRITE, "rebinding a bound type-2 window");
    }

    /** o10-37.2.40: a type-2 window is freed by invalidation, not by a zero-length bind. */
    @Test
    void type2BindWithLengthZeroCompletesWithMwBindErr() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        assertBindFails(mw, mw.nextRkey(), 0, 0, "zero-length type-2 bind");
    }

    /** o10-36.2.2: type-1 windows are never zero based. */
    @Test
    void type1ZeroBasedBindCompletesWithMwBindErr() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_1);
        assertBindFails(mw, 0, WIN_LEN, Access.REMOTE_WRITE | Access.ZERO_BASED, "zero-based type-1 bind");
    }

    /** A type-2 window after LOCAL_INV is free again and can be bound anew. */
    @Test
    void type2WindowCanBeBoundAgainAfterLocalInvalidate() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        int rkey = bind(mw, WIN_LEN, Access.REMOTE_WRITE);
        p.a().qp().postSend(new SendWorkRequest().wrId(77).flags(SendFlag.SIGNALED).localInvalidate(rkey));
        expect(p.a().sendCq(), 77, WcOpcode.LOCAL_INV);
        int again = bind(mw, WIN_LEN, Access.REMOTE_WRITE);
        assertNotEquals(rkey, again);
        assertWriteWorks(again);
    }

    /** B writes {@code len} bytes of its pattern to remote address {@code at} through {@code rkey}. */
    private WorkCompletion writeFromBAt(long at, int rkey, int len) {
        long id = nextWrId++;
        p.b().qp().postSend(wr(id, WrOpcode.RDMA_WRITE).sge(src, 0, len).rdma(at, rkey));
        WorkCompletion wc = pollOne(p.b().sendCq());
        assertEquals(id, wc.wrId(), wc::toString);
        return wc;
    }

    /** A zero-based type-2 window is addressed from 0: offset x is the bind address + x. */
    @Test
    void type2ZeroBasedWindowIsAddressedFromZero() {
        setUp();
        MemoryWindow mw = window(MwType.TYPE_2);
        int rkey = bind(mw, WIN_LEN, Access.REMOTE_WRITE | Access.ZERO_BASED);
        WorkCompletion wc = writeFromBAt(16, rkey, 100);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertPattern(target.segment(), WIN_OFF + 16, 100, 7, "written at window offset 16");
        WorkCompletion past = writeFromBAt(WIN_LEN - 32, rkey, 64);
        assumeNakNotLost(past, WcStatus.REM_ACCESS_ERR);
        assertEquals(WcStatus.REM_ACCESS_ERR, past.status(), () -> "past the zero-based window's end: " + past);
    }
}
