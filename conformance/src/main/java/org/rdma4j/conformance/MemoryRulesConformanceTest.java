// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryRegion.ReregFlag;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.MrMemoryRules;

/**
 * SEMANTICS.md, Control path, "MR": which memory can be registered, on every provider with one errno
 * and message (the verbs SPI's {@code MrMemoryRules} and {@code MrAccessRules}), and how a registration
 * ends with its memory.
 */
@Rule({"S-MR-5", "S-MR-6", "S-MR-7", "S-LIFE-1"})
public class MemoryRulesConformanceTest extends AbstractVerbsTest {
    private static final int LW = Access.LOCAL_WRITE;
    private static final int RR = Access.REMOTE_READ;

    /**
     * A heap segment (an array, a non-direct ByteBuffer) is refused EINVAL by regMr and by rereg with a
     * new translation, before any provider-specific check (so rxe's EOPNOTSUPP for a new translation
     * does not apply), with the one message every provider gives; the region stays as it was.
     */
    @Test
    void registeringHeapMemoryIsRefusedWithEinvalOnEveryProvider() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment array = MemorySegment.ofArray(new byte[4096]);
        MemorySegment buffer = MemorySegment.ofBuffer(ByteBuffer.allocate(4096));
        MemorySegment longs = MemorySegment.ofArray(new long[512]);
        for (MemorySegment heap : new MemorySegment[] {array, buffer, longs}) {
            VerbsException reg = assertErrno(Errno.EINVAL, () -> track(pd.regMr(heap, LW)));
            assertEquals(sharedRefusal(heap, "ibv_reg_mr"), reg.getMessage(), "regMr's message");
            assertErrno(Errno.EINVAL, () -> track(pd.regMr(heap, 0)));
        }
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        long address = mr.address();
        int lkey = mr.lkey();
        VerbsException rereg = assertErrno(Errno.EINVAL,
                () -> mr.rereg(ReregFlag.CHANGE_TRANSLATION, null, array, 0));
        assertEquals(sharedRefusal(array, "ibv_rereg_mr"), rereg.getMessage(), "rereg's message");
        assertErrno(Errno.EINVAL, () -> mr.rereg(ReregFlag.CHANGE_TRANSLATION | ReregFlag.CHANGE_ACCESS, null,
                buffer, LW));
        assertEquals(address, mr.address(), "a refused rereg changes nothing");
        assertEquals(lkey, mr.lkey(), "a refused rereg changes nothing");
        assertEquals(MR_ALL, mr.access(), "a refused rereg changes nothing");
        assertTrue(mr.segment().isNative());
    }

    /** The message of the verbs SPI's one check, which every provider calls. */
    private static String sharedRefusal(MemorySegment heap, String verb) {
        return assertThrows(VerbsException.class, () -> MrMemoryRules.check(heap, verb)).getMessage();
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

    /**
     * Memory of a confined arena is refused EINVAL by registration and by re-registration with a new
     * translation, on every provider and with the same message (the soft device uses a region from its
     * own threads; the native provider must be able to end the registration from the thread that closes
     * the arena), and the region stays as it was.
     */
    @Rule("S-MR-6")
    @Test
    void registeringAConfinedArenasMemoryIsEinvalOnEveryProvider() {
        ProtectionDomain pd = allocPd(ctx);
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment mine = confined.allocate(PAGE_SIZE, PAGE_SIZE);
            VerbsException reg = assertErrno(Errno.EINVAL, () -> track(pd.regMr(mine, LW)));
            assertEquals(assertThrows(VerbsException.class, () -> MrMemoryRules.check(mine, "ibv_reg_mr")).getMessage(),
                    reg.getMessage(), "the SPI's one message");
            MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
            long address = mr.address();
            assertErrno(Errno.EINVAL, () -> mr.rereg(ReregFlag.CHANGE_TRANSLATION, null, mine, 0));
            assertEquals(address, mr.address(), "a refused rereg changes nothing");
        }
    }

    /** Zero bytes are EINVAL on every provider (the kernel's ib_umem_get refuses an empty range). */
    @Rule("S-MR-6")
    @Test
    void registeringZeroBytesIsEinval() {
        ProtectionDomain pd = allocPd(ctx);
        assertErrno(Errno.EINVAL, () -> track(pd.regMr(allocate(PAGE_SIZE).asSlice(0, 0), LW)));
    }

    /**
     * A read-only segment cannot be registered with LOCAL_WRITE (EACCES) on any provider, since the
     * device would write what the program may not; without LOCAL_WRITE it can.
     */
    @Rule("S-MR-6")
    @Test
    void readOnlyMemoryWithLocalWriteIsEaccesAndWithoutItIsRegistered() {
        ProtectionDomain pd = allocPd(ctx);
        MemorySegment ro = allocate(PAGE_SIZE).asReadOnly();
        assertErrno(Errno.EACCES, () -> track(pd.regMr(ro, LW)));
        assertEquals(RR, track(pd.regMr(ro, RR)).access());
    }

    /** ZERO_BASED is not an access a region takes on any provider: EOPNOTSUPP (its iova is its address). */
    @Rule("S-MR-6")
    @Test
    void zeroBasedRegistrationIsEopnotsupp() {
        ProtectionDomain pd = allocPd(ctx);
        assertErrno(Errno.EOPNOTSUPP, () -> track(pd.regMr(allocate(PAGE_SIZE), LW | Access.ZERO_BASED)));
    }

    /**
     * Closing the arena of registered memory ends the registration with it, on every provider: the
     * arena closes without error, the region cannot be re-registered any more (EINVAL), and it closes,
     * releasing its PD. (What traffic through its keys does is S-LIFE-1.)
     */
    @Rule("S-MR-7")
    @Test
    void closingTheArenaOfRegisteredMemoryEndsTheRegistration() {
        ProtectionDomain pd = allocPd(ctx);
        Arena own = Arena.ofShared();
        MemoryRegion mr = pd.regMr(own.allocate(PAGE_SIZE, PAGE_SIZE), MR_ALL);
        own.close();
        VerbsException e = assertErrno(Errno.EINVAL, () -> mr.rereg(ReregFlag.CHANGE_ACCESS, null, null, LW));
        assertTrue(e.getMessage().contains("arena closed"), e::getMessage);
        assertEquals(MR_ALL, mr.access(), "a refused rereg changes nothing");
        mr.close();
        assertTrue(mr.isClosed());
        pd.close();
        assertTrue(pd.isClosed(), "the region released its PD");
    }
}
