// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.VerbsException;

class QpAttrRangesTest {
    /** A device with two ports, a 4-entry P_Key table and 16 outstanding READ/atomics. */
    private static String refusal(QpAttr attr, int mask) {
        VerbsException e = assertThrows(VerbsException.class, () -> QpAttrRanges.check(attr, mask, 2, 4, 16));
        assertEquals(Errno.EINVAL, e.errno());
        return e.getMessage();
    }

    @Test
    void portsOutsideTheDeviceAreRefused() {
        assertEquals("EINVAL: port 3 does not exist", refusal(new QpAttr().portNum(3), QpAttrMask.PORT));
        assertEquals("EINVAL: port 0 does not exist", refusal(new QpAttr().portNum(0), QpAttrMask.PORT));
        assertDoesNotThrow(() -> QpAttrRanges.check(new QpAttr().portNum(2), QpAttrMask.PORT, 2, 4, 16));
    }

    @Test
    void pkeyIndexMustBeInsideTheTable() {
        assertEquals("EINVAL: P_Key index 4 is outside the table",
                refusal(new QpAttr().pkeyIndex(4), QpAttrMask.PKEY_INDEX));
        assertDoesNotThrow(() -> QpAttrRanges.check(new QpAttr().pkeyIndex(3), QpAttrMask.PKEY_INDEX, 2, 4, 16));
    }

    @Test
    void regionOnlyAccessBitsAreNotQpAccess() {
        refusal(new QpAttr().accessFlags(Access.ZERO_BASED), QpAttrMask.ACCESS_FLAGS);
        assertDoesNotThrow(() -> QpAttrRanges.check(new QpAttr().accessFlags(QpAttrRanges.QP_ACCESS_BITS),
                QpAttrMask.ACCESS_FLAGS, 2, 4, 16));
    }

    @Test
    void fieldWidthsOfTheWireAreEnforced() {
        assertEquals("EINVAL: dest_qp_num 0x1000000 is not a 24-bit QPN",
                refusal(new QpAttr().destQpNum(1 << 24), QpAttrMask.DEST_QPN));
        assertEquals("EINVAL: timeout 32 is outside 0..31", refusal(new QpAttr().timeout(32), QpAttrMask.TIMEOUT));
        assertEquals("EINVAL: retry_cnt 8 is outside 0..7", refusal(new QpAttr().retryCnt(8), QpAttrMask.RETRY_CNT));
        assertEquals("EINVAL: rnr_retry -1 is outside 0..7", refusal(new QpAttr().rnrRetry(-1), QpAttrMask.RNR_RETRY));
        assertEquals("EINVAL: min_rnr_timer 32 is outside 0..31",
                refusal(new QpAttr().minRnrTimer(32), QpAttrMask.MIN_RNR_TIMER));
        assertEquals("EINVAL: no path MTU", refusal(new QpAttr(), QpAttrMask.PATH_MTU));
    }

    @Test
    void readAtomicDepthsFollowTheDevice() {
        assertEquals("EINVAL: max_rd_atomic 17 is outside 0..16",
                refusal(new QpAttr().maxRdAtomic(17), QpAttrMask.MAX_QP_RD_ATOMIC));
        assertEquals("EINVAL: max_dest_rd_atomic 17 is outside 0..16",
                refusal(new QpAttr().maxDestRdAtomic(17), QpAttrMask.MAX_DEST_RD_ATOMIC));
    }

    @Test
    void attributesOutsideTheMaskAreNotLookedAt() {
        QpAttr wild = new QpAttr().portNum(99).timeout(99).retryCnt(99).destQpNum(-1).pathMtu(Mtu.MTU_1024);
        assertDoesNotThrow(() -> QpAttrRanges.check(wild, QpAttrMask.PATH_MTU, 2, 4, 16));
    }

    @Test
    void capacitiesAboveTheDeviceMaximumAreRefused() {
        VerbsException e = assertThrows(VerbsException.class,
                () -> QpAttrRanges.checkCap(new QpCap(10, 1, 1, 1, 0), true, 8, 4, 64));
        assertEquals("EINVAL: max_send_wr 10 exceeds the device maximum 8", e.getMessage());
        assertThrows(VerbsException.class, () -> QpAttrRanges.checkCap(new QpCap(1, 9, 1, 1, 0), true, 8, 4, 64));
        // a QP on an SRQ has no receive queue of its own: its receive capacities are not checked
        assertDoesNotThrow(() -> QpAttrRanges.checkCap(new QpCap(1, 9, 1, 9, 0), false, 8, 4, 64));
        assertThrows(VerbsException.class, () -> QpAttrRanges.checkCap(new QpCap(1, 1, 1, 1, 65), true, 8, 4, 64));
    }

    @Test
    void maxRdAtomicIsBoundedByTheInitiatorDepthAndMaxDestRdAtomicByTheResponderDepth() {
        QpAttr a = new QpAttr().maxRdAtomic(9).maxDestRdAtomic(9);
        VerbsException init = assertThrows(VerbsException.class,
                () -> QpAttrRanges.check(a, QpAttrMask.MAX_QP_RD_ATOMIC, 1, 1, 8, 16));
        assertEquals("EINVAL: max_rd_atomic 9 is outside 0..8", init.getMessage());
        assertDoesNotThrow(() -> QpAttrRanges.check(a, QpAttrMask.MAX_DEST_RD_ATOMIC, 1, 1, 8, 16));
        VerbsException dest = assertThrows(VerbsException.class,
                () -> QpAttrRanges.check(a, QpAttrMask.MAX_DEST_RD_ATOMIC, 1, 1, 16, 8));
        assertEquals("EINVAL: max_dest_rd_atomic 9 is outside 0..8", dest.getMessage());
    }

    @Test
    void retryCountOfEightIsRefusedWhateverTheDevice() {
        // rxe takes 8 and hardware keeps three bits: the rule holds on every provider
        assertEquals("EINVAL: retry_cnt 8 is outside 0..7",
                refusal(new QpAttr().retryCnt(8), QpAttrMask.RETRY_CNT));
        assertEquals("EINVAL: rnr_retry 8 is outside 0..7",
                refusal(new QpAttr().rnrRetry(8), QpAttrMask.RNR_RETRY));
        assertDoesNotThrow(() -> QpAttrRanges.check(new QpAttr().retryCnt(7).rnrRetry(7),
                QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY, 1, 1, 1, 1));
    }
}
