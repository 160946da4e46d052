// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.VerbsException;

/** The native provider applies the SPI's ranges with the device's own limits (no device needed). */
class NativeLimitsTest {
    /** rxe's limits as ibv_query_device reports them: 1 port, 16K WRs, 32 SGEs, 128 READ/atomics. */
    private static DeviceAttr rxe(int maxPkeys) {
        return new DeviceAttr("0.0", 1L, 1L, 1L << 32, 0xFFFFF000L, 0xFFFFFF, 0, 0, 64 * 1024, 0x4000, 0, 32, 27,
                16384, 32768, 2048, 512, 128, 0, 0x3F000, 128, 0, DeviceAttr.AtomicCap.ATOMIC_HCA, 0, 0, 4096, 0,
                0, 8192, 56, 16384, 16384, 0, 0, 917, 0x4000, 27, maxPkeys, 15, 1, 0, 1);
    }

    private static int errno(Runnable r) {
        return assertThrows(VerbsException.class, r::run).errno();
    }

    @Test
    void retryCountEightIsEinvalBeforeTheKernelSeesIt() {
        NativeLimits l = NativeLimits.of(rxe(64), 1);
        QpAttr a = new QpAttr().retryCnt(8);
        VerbsException e = assertThrows(VerbsException.class, () -> l.checkModify(a, a.mask()));
        assertEquals("EINVAL: retry_cnt 8 is outside 0..7", e.getMessage());
        QpAttr ok = new QpAttr().retryCnt(7).rnrRetry(7).timeout(31).minRnrTimer(31);
        assertDoesNotThrow(() -> l.checkModify(ok, ok.mask()));
    }

    @Test
    void theReadAndAtomicDepthsAreTheDevicesAndAPortBeyondItsCountIsEinval() {
        NativeLimits l = NativeLimits.of(rxe(64), 1);
        QpAttr deep = new QpAttr().maxRdAtomic(129);
        assertEquals(Errno.EINVAL, errno(() -> l.checkModify(deep, deep.mask())));
        QpAttr deepDest = new QpAttr().maxDestRdAtomic(129);
        assertEquals(Errno.EINVAL, errno(() -> l.checkModify(deepDest, deepDest.mask())));
        QpAttr max = new QpAttr().maxRdAtomic(128).maxDestRdAtomic(128);
        assertDoesNotThrow(() -> l.checkModify(max, max.mask()));
        QpAttr port2 = new QpAttr().portNum(2);
        assertEquals(Errno.EINVAL, errno(() -> l.checkModify(port2, port2.mask())));
    }

    @Test
    void thePkeyTableIsThePortsAndADeviceReportingNoneStillTakesIndexZero() {
        // siw reports max_pkeys 0 and takes P_Key index 0; rxe's port has a 1-entry table
        NativeLimits siw = NativeLimits.of(rxe(0), 0);
        QpAttr zero = new QpAttr().pkeyIndex(0);
        assertDoesNotThrow(() -> siw.checkModify(zero, zero.mask()));
        NativeLimits rxe = NativeLimits.of(rxe(64), 1);
        QpAttr one = new QpAttr().pkeyIndex(1);
        assertEquals(Errno.EINVAL, errno(() -> rxe.checkModify(one, one.mask())));
    }

    @Test
    void capacitiesAboveTheDevicesAreEinvalAndInlineIsLeftToTheProvider() {
        NativeLimits l = NativeLimits.of(rxe(64), 1);
        assertEquals(Errno.EINVAL, errno(() -> l.checkCreate(new QpCap(0x4001, 1, 1, 1, 0), true)));
        assertEquals(Errno.EINVAL, errno(() -> l.checkCreate(new QpCap(1, 1, 33, 1, 0), true)));
        assertEquals(Errno.EINVAL, errno(() -> l.checkCreate(new QpCap(1, 0x4001, 1, 1, 0), true)));
        assertDoesNotThrow(() -> l.checkCreate(new QpCap(1, 0x4001, 1, 33, 0), false)); // receives from an SRQ
        assertDoesNotThrow(() -> l.checkCreate(new QpCap(0x4000, 0x4000, 32, 32, 4096), true));
    }
}
