// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class QpAttrMaskRecordingTest {
    @Test
    void aFreshAttrHasAnEmptyMask() {
        assertEquals(0, new QpAttr().mask());
    }

    @Test
    void eachSetterRecordsItsOwnBit() {
        assertEquals(QpAttrMask.STATE, new QpAttr().state(QpState.INIT).mask());
        assertEquals(QpAttrMask.CUR_STATE, new QpAttr().curState(QpState.RTS).mask());
        assertEquals(QpAttrMask.EN_SQD_ASYNC_NOTIFY, new QpAttr().enSqdAsyncNotify(true).mask());
        assertEquals(QpAttrMask.ACCESS_FLAGS, new QpAttr().accessFlags(0).mask());
        assertEquals(QpAttrMask.PKEY_INDEX, new QpAttr().pkeyIndex(0).mask());
        assertEquals(QpAttrMask.PORT, new QpAttr().portNum(1).mask());
        assertEquals(QpAttrMask.QKEY, new QpAttr().qkey(1).mask());
        assertEquals(QpAttrMask.AV, new QpAttr().ahAttr(AhAttr.roce(Gid.parse("fd00::1"), 1)).mask());
        assertEquals(QpAttrMask.PATH_MTU, new QpAttr().pathMtu(Mtu.MTU_1024).mask());
        assertEquals(QpAttrMask.TIMEOUT, new QpAttr().timeout(14).mask());
        assertEquals(QpAttrMask.RETRY_CNT, new QpAttr().retryCnt(7).mask());
        assertEquals(QpAttrMask.RNR_RETRY, new QpAttr().rnrRetry(7).mask());
        assertEquals(QpAttrMask.RQ_PSN, new QpAttr().rqPsn(0).mask());
        assertEquals(QpAttrMask.MAX_QP_RD_ATOMIC, new QpAttr().maxRdAtomic(1).mask());
        assertEquals(QpAttrMask.MIN_RNR_TIMER, new QpAttr().minRnrTimer(12).mask());
        assertEquals(QpAttrMask.SQ_PSN, new QpAttr().sqPsn(0).mask());
        assertEquals(QpAttrMask.MAX_DEST_RD_ATOMIC, new QpAttr().maxDestRdAtomic(1).mask());
        assertEquals(QpAttrMask.CAP, new QpAttr().cap(new QpCap()).mask());
        assertEquals(QpAttrMask.DEST_QPN, new QpAttr().destQpNum(5).mask());
    }

    @Test
    void settersAccumulateAndDirectFieldWritesDoNot() {
        QpAttr a = new QpAttr().state(QpState.RTS).sqPsn(5).timeout(14);
        a.retryCnt = 3;
        assertEquals(QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT, a.mask());
        assertEquals(0, a.clearMask().mask());
        assertEquals(5, a.sqPsn);
    }
}
