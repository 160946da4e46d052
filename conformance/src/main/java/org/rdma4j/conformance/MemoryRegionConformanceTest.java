package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryRegion.ReregFlag;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, Control path, "MR". */
@Rule({"S-MR-1", "S-MR-2", "S-MR-3", "S-MR-4", "S-LIFE-1"})
public class MemoryRegionConformanceTest extends AbstractVerbsTest {
    private static final int LW = Access.LOCAL_WRITE;
    private static final int RW = Access.REMOTE_WRITE;
    private static final int RR = Access.REMOTE_READ;
    private static final int RA = Access.REMOTE_ATOMIC;
    private static final int MW = Access.MW_BIND;

    @Test
    void registrationReportsWhatWasRegistered() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(3 * PAGE_SIZE);
        try (MemoryRegion mr = pd.regMr(s, MR_ALL)) {
            assertSame(pd, mr.pd());
            assertEquals(s.address(), mr.address());
            assertEquals(s.byteSize(), mr.length());
            assertEquals(MR_ALL, mr.access());
            assertEquals(s.address(), mr.segment().address());
            assertEquals(s.byteSize(), mr.segment().byteSize());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {RW, RA, RW | RR, RA | RR, RW | RA, RW | MW})
    void remoteWriteOrAtomicWithoutLocalWriteFailsEinval(int access) {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(PAGE_SIZE);
        assertErrno(Errno.EINVAL, () -> track(pd.regMr(s, access)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, LW, RR, LW | RW, LW | RA, LW | RW | RR | RA, LW | MW, RR | MW})
    void validAccessIsAccepted(int access) {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = track(pd.regMr(allocate(PAGE_SIZE), access));
        assertEquals(access, mr.access(), Access.toString(access));
    }

    @Test
    void sameBufferRegisteredSeveralTimesHasDistinctKeys() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(PAGE_SIZE);
        Set<Integer> lkeys = new HashSet<>();
        Set<Integer> rkeys = new HashSet<>();
        for (int i = 0; i < 4; i++) {
            MemoryRegion mr = track(pd.regMr(s, MR_ALL));
            assertTrue(lkeys.add(mr.lkey()), "lkey 0x" + Integer.toHexString(mr.lkey()) + " given twice");
            assertTrue(rkeys.add(mr.rkey()), "rkey 0x" + Integer.toHexString(mr.rkey()) + " given twice");
        }
    }

    @Test
    void overlappingSlicesCanBeRegistered() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment s = allocate(4 * PAGE_SIZE);
        MemoryRegion whole = track(pd.regMr(s, LW));
        MemoryRegion middle = track(pd.regMr(s.asSlice(PAGE_SIZE + 17, 2 * PAGE_SIZE), LW | RR));
        assertEquals(s.address() + PAGE_SIZE + 17, middle.address());
        assertNotEquals(whole.lkey(), middle.lkey());
    }

    @Test
    void reregChangesAccess() {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, LW);
        assumeReregSupported(mr);
        mr.rereg(ReregFlag.CHANGE_ACCESS, null, MR_ALL);
        assertEquals(MR_ALL, mr.access());
        assertSame(pd, mr.pd());
        mr.rereg(ReregFlag.CHANGE_ACCESS, null, RR);
        assertEquals(RR, mr.access());
    }

    @Test
    void reregToRemoteWriteWithoutLocalWriteFailsEinval() {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, LW);
        assumeReregSupported(mr);
        assertErrno(Errno.EINVAL, () -> mr.rereg(ReregFlag.CHANGE_ACCESS, null, RW));
        assertEquals(LW, mr.access(), "a refused rereg changes nothing");
    }

    @Test
    void reregChangesPd() {
        ProtectionDomain pd1 = allocPd(ctx);
        ProtectionDomain pd2 = allocPd(ctx);
        MemoryRegion mr = register(pd1, PAGE_SIZE, LW);
        assumeReregSupported(mr);
        mr.rereg(ReregFlag.CHANGE_PD, pd2, 0);
        assertSame(pd2, mr.pd());
        assertEquals(LW, mr.access(), "CHANGE_PD alone keeps the access");
        pd1.close();
        assertTrue(pd1.isClosed(), "the old PD is no longer used by the MR");
        assertErrno(Errno.EBUSY, pd2::close);
    }

    @Test
    void reregAccessGrantsRemoteWrite() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, LW);
        fillPattern(src.segment(), 0, 100, 1);
        assumeReregSupported(dst);
        dst.rereg(ReregFlag.CHANGE_ACCESS, null, LW | RW);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 100).rdma(addr(dst, 8), dst.rkey()));
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 8, 100, 1, "written through the re-registered rkey");
    }

    @Test
    void reregToThePdOfTheQpGrantsItAccess() {
        QpPair p = connect(spec(QpType.RC));
        ProtectionDomain other = allocPd(p.b().ctx());
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemoryRegion dst = register(other, PAGE_SIZE, LW | RW);
        fillPattern(src.segment(), 0, 64, 2);
        assumeReregSupported(dst);
        dst.rereg(ReregFlag.CHANGE_PD, p.b().pd(), 0);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 64).rdma(addr(dst, 0), dst.rkey()));
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 0, 64, 2, "written after moving the MR to the QP's PD");
    }

    @Test
    void deregWithBoundType2WindowIsRefusedEbusy() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion mr = register(p.a(), PAGE_SIZE, LW | RW | MW);
        MemoryWindow mw = track(p.a().pd().allocMw(MwType.TYPE_2));
        int rkey = mw.nextRkey();
        p.a().qp().postSend(new SendWorkRequest().wrId(5).flags(SendFlag.SIGNALED)
                .bindMw(mw, rkey, mr, mr.address(), PAGE_SIZE, RW));
        expect(p.a().sendCq(), 5, WcOpcode.BIND_MW);
        assertErrno(Errno.EBUSY, mr::close);
        assertFalse(mr.isClosed());
        mw.close();
        mr.close();
        assertTrue(mr.isClosed());
    }

    @Test
    void deregWhileAnOutstandingWorkRequestUsesItIsRefused() {
        // B never posts a receive and A retries RNR for ever: the SEND stays outstanding.
        QpPair p = connect(spec(QpType.RC).rnrRetry(7).minRnrTimerB(20));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 64));
        assertErrno(Errno.EBUSY, src::close);
        QpBringUp.to(p.a().qp(), QpState.ERR);
        expect(p.a().sendCq(), 1, WcStatus.WR_FLUSH_ERR);
        src.close();
        assertTrue(src.isClosed());
    }

    /** rereg with a new translation, or a skip where the provider cannot move a registration (rxe). */
    private static void reregTranslation(MemoryRegion mr, MemorySegment to) {
        try {
            mr.rereg(ReregFlag.CHANGE_TRANSLATION, null, to, 0);
        } catch (VerbsException e) {
            assumeTrue(e.errno() != Errno.EOPNOTSUPP, "the provider cannot change an MR's translation");
            throw e;
        }
    }

    @Test
    void reregWithANewTranslationMovesTheRegionAndRemoteWritesLandInTheNewMemory() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, LW | RW);
        MemorySegment old = dst.segment();
        MemorySegment fresh = allocate(2 * PAGE_SIZE);
        reregTranslation(dst, fresh);
        assertEquals(fresh.address(), dst.address(), "address() after rereg");
        assertEquals(fresh.byteSize(), dst.length(), "length() after rereg");
        assertEquals(fresh.address(), dst.segment().address(), "segment() after rereg");
        assertEquals(LW | RW, dst.access(), "access kept");
        fillPattern(src.segment(), 0, 200, 3);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 200).rdma(fresh.address() + PAGE_SIZE + 8,
                dst.rkey()));
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(fresh, PAGE_SIZE + 8, 200, 3, "written into the new memory");
        assertGuard(old, 0, old.byteSize(), "the old memory");
        p.a().qp().postSend(wr(2, WrOpcode.RDMA_WRITE).sge(src, 0, 8).rdma(old.address(), dst.rkey()));
        expect(p.a().sendCq(), 2, WcStatus.REM_ACCESS_ERR);
        assertGuard(old, 0, old.byteSize(), "the old memory is no longer reachable");
    }

    @Test
    void reregWithANewTranslationWhileAWindowIsBoundIsRefusedEbusy() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion mr = register(p.a(), PAGE_SIZE, LW | RW | MW);
        MemoryWindow mw = track(p.a().pd().allocMw(MwType.TYPE_2));
        p.a().qp().postSend(new SendWorkRequest().wrId(5).flags(SendFlag.SIGNALED)
                .bindMw(mw, mw.nextRkey(), mr, mr.address(), PAGE_SIZE, RW));
        expect(p.a().sendCq(), 5, WcOpcode.BIND_MW);
        long before = mr.address();
        VerbsException e = assertThrows(VerbsException.class,
                () -> mr.rereg(ReregFlag.CHANGE_TRANSLATION, null, allocate(PAGE_SIZE), 0));
        assumeTrue(e.errno() != Errno.EOPNOTSUPP, "the provider cannot change an MR's translation");
        assertEquals(Errno.name(Errno.EBUSY), Errno.name(e.errno()), e::getMessage);
        assertEquals(before, mr.address(), "a refused rereg changes nothing");
    }

    @Test
    void reregWithANewTranslationWhileAnOutstandingWorkRequestUsesItIsRefusedEbusy() {
        QpPair p = connect(spec(QpType.RC).rnrRetry(7).minRnrTimerB(20));
        MemoryRegion src = register(p.a(), PAGE_SIZE, LW);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 64));
        VerbsException e = assertThrows(VerbsException.class,
                () -> src.rereg(ReregFlag.CHANGE_TRANSLATION, null, allocate(PAGE_SIZE), 0));
        QpBringUp.to(p.a().qp(), QpState.ERR);
        expect(p.a().sendCq(), 1, WcStatus.WR_FLUSH_ERR);
        assumeTrue(e.errno() != Errno.EOPNOTSUPP, "the provider cannot change an MR's translation");
        assertEquals(Errno.name(Errno.EBUSY), Errno.name(e.errno()), e::getMessage);
    }

    @Test
    void registeringMemoryWhoseArenaIsClosedFailsEfault() {
        ProtectionDomain pd = allocPd(ctx);
        Arena gone = Arena.ofShared();
        MemorySegment s = gone.allocate(PAGE_SIZE, PAGE_SIZE);
        gone.close();
        assertErrno(Errno.EFAULT, () -> track(pd.regMr(s, MR_ALL)));
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        Arena gone2 = Arena.ofShared();
        MemorySegment s2 = gone2.allocate(PAGE_SIZE, PAGE_SIZE);
        gone2.close();
        VerbsException e = assertThrows(VerbsException.class,
                () -> mr.rereg(ReregFlag.CHANGE_TRANSLATION, null, s2, 0));
        assertTrue(e.errno() == Errno.EFAULT || e.errno() == Errno.EOPNOTSUPP, e::getMessage);
    }
}
