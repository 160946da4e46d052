// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_QP_ATTR;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.VerbsException;

/** {@link QpAttr} to and from {@code struct ibv_qp_attr}. Stateless. */
final class QpAttrCodec {
    static final long QP_STATE = offset(IBV_QP_ATTR, "qp_state");
    private static final long CUR_QP_STATE = offset(IBV_QP_ATTR, "cur_qp_state");
    private static final long PATH_MTU = offset(IBV_QP_ATTR, "path_mtu");
    private static final long QKEY = offset(IBV_QP_ATTR, "qkey");
    private static final long RQ_PSN = offset(IBV_QP_ATTR, "rq_psn");
    private static final long SQ_PSN = offset(IBV_QP_ATTR, "sq_psn");
    private static final long DEST_QP_NUM = offset(IBV_QP_ATTR, "dest_qp_num");
    private static final long ACCESS = offset(IBV_QP_ATTR, "qp_access_flags");
    private static final long CAP_SEND_WR = offset(IBV_QP_ATTR, "cap.max_send_wr");
    private static final long CAP_RECV_WR = offset(IBV_QP_ATTR, "cap.max_recv_wr");
    private static final long CAP_SEND_SGE = offset(IBV_QP_ATTR, "cap.max_send_sge");
    private static final long CAP_RECV_SGE = offset(IBV_QP_ATTR, "cap.max_recv_sge");
    private static final long CAP_INLINE = offset(IBV_QP_ATTR, "cap.max_inline_data");
    private static final long AH_ATTR = offset(IBV_QP_ATTR, "ah_attr");
    private static final long PKEY_INDEX = offset(IBV_QP_ATTR, "pkey_index");
    private static final long EN_SQD_ASYNC_NOTIFY = offset(IBV_QP_ATTR, "en_sqd_async_notify");
    private static final long SQ_DRAINING = offset(IBV_QP_ATTR, "sq_draining");
    private static final long MAX_RD_ATOMIC = offset(IBV_QP_ATTR, "max_rd_atomic");
    private static final long MAX_DEST_RD_ATOMIC = offset(IBV_QP_ATTR, "max_dest_rd_atomic");
    private static final long MIN_RNR_TIMER = offset(IBV_QP_ATTR, "min_rnr_timer");
    private static final long PORT_NUM = offset(IBV_QP_ATTR, "port_num");
    private static final long TIMEOUT = offset(IBV_QP_ATTR, "timeout");
    private static final long RETRY_CNT = offset(IBV_QP_ATTR, "retry_cnt");
    private static final long RNR_RETRY = offset(IBV_QP_ATTR, "rnr_retry");

    private QpAttrCodec() {}

    /** Writes the attributes {@code mask} names into the zeroed {@code m}. */
    static void encode(MemorySegment m, QpAttr a, int mask) {
        if ((mask & QpAttrMask.STATE) != 0) {
            if (a.qpState == null) {
                throw new VerbsException(Errno.EINVAL, "IBV_QP_STATE in the mask but no target state");
            }
            m.set(ValueLayout.JAVA_INT, QP_STATE, a.qpState.value());
        }
        if ((mask & QpAttrMask.CUR_STATE) != 0) {
            if (a.curQpState == null) {
                throw new VerbsException(Errno.EINVAL, "IBV_QP_CUR_STATE in the mask but no current state");
            }
            m.set(ValueLayout.JAVA_INT, CUR_QP_STATE, a.curQpState.value());
        }
        if ((mask & QpAttrMask.PATH_MTU) != 0) {
            if (a.pathMtu == null) {
                throw new VerbsException(Errno.EINVAL, "IBV_QP_PATH_MTU in the mask but no path MTU");
            }
            m.set(ValueLayout.JAVA_INT, PATH_MTU, a.pathMtu.value());
        }
        m.set(ValueLayout.JAVA_INT, QKEY, a.qkey);
        m.set(ValueLayout.JAVA_INT, RQ_PSN, a.rqPsn);
        m.set(ValueLayout.JAVA_INT, SQ_PSN, a.sqPsn);
        m.set(ValueLayout.JAVA_INT, DEST_QP_NUM, a.destQpNum);
        m.set(ValueLayout.JAVA_INT, ACCESS, a.qpAccessFlags);
        if ((mask & QpAttrMask.CAP) != 0 && a.cap != null) {
            m.set(ValueLayout.JAVA_INT, CAP_SEND_WR, a.cap.maxSendWr);
            m.set(ValueLayout.JAVA_INT, CAP_RECV_WR, a.cap.maxRecvWr);
            m.set(ValueLayout.JAVA_INT, CAP_SEND_SGE, a.cap.maxSendSge);
            m.set(ValueLayout.JAVA_INT, CAP_RECV_SGE, a.cap.maxRecvSge);
            m.set(ValueLayout.JAVA_INT, CAP_INLINE, a.cap.maxInlineData);
        }
        if ((mask & QpAttrMask.AV) != 0) {
            AhCodec.encode(m, AH_ATTR, a.ahAttr);
        }
        m.set(ValueLayout.JAVA_SHORT, PKEY_INDEX, (short) a.pkeyIndex);
        m.set(ValueLayout.JAVA_BYTE, EN_SQD_ASYNC_NOTIFY, (byte) (a.enSqdAsyncNotify ? 1 : 0));
        m.set(ValueLayout.JAVA_BYTE, MAX_RD_ATOMIC, (byte) a.maxRdAtomic);
        m.set(ValueLayout.JAVA_BYTE, MAX_DEST_RD_ATOMIC, (byte) a.maxDestRdAtomic);
        m.set(ValueLayout.JAVA_BYTE, MIN_RNR_TIMER, (byte) a.minRnrTimer);
        m.set(ValueLayout.JAVA_BYTE, PORT_NUM, (byte) a.portNum);
        m.set(ValueLayout.JAVA_BYTE, TIMEOUT, (byte) a.timeout);
        m.set(ValueLayout.JAVA_BYTE, RETRY_CNT, (byte) a.retryCnt);
        m.set(ValueLayout.JAVA_BYTE, RNR_RETRY, (byte) a.rnrRetry);
    }

    /**
     * The attributes {@code mask} names, read from {@code m} into a new QpAttr through its setters, so
     * that its {@link QpAttr#mask()} is {@code mask} (what rdma_init_qp_attr returns). Bits this codec
     * does not know (alternate path, path migration state) are dropped.
     */
    static QpAttr decodeMasked(MemorySegment m, int mask) {
        QpAttr v = new QpAttr();
        decode(m, v);
        QpAttr a = new QpAttr();
        if ((mask & QpAttrMask.STATE) != 0) a.state(v.qpState);
        if ((mask & QpAttrMask.CUR_STATE) != 0) a.curState(v.curQpState);
        if ((mask & QpAttrMask.EN_SQD_ASYNC_NOTIFY) != 0) a.enSqdAsyncNotify(v.enSqdAsyncNotify);
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0) a.accessFlags(v.qpAccessFlags);
        if ((mask & QpAttrMask.PKEY_INDEX) != 0) a.pkeyIndex(v.pkeyIndex);
        if ((mask & QpAttrMask.PORT) != 0) a.portNum(v.portNum);
        if ((mask & QpAttrMask.QKEY) != 0) a.qkey(v.qkey);
        if ((mask & QpAttrMask.AV) != 0) a.ahAttr(v.ahAttr);
        if ((mask & QpAttrMask.PATH_MTU) != 0) a.pathMtu(v.pathMtu);
        if ((mask & QpAttrMask.TIMEOUT) != 0) a.timeout(v.timeout);
        if ((mask & QpAttrMask.RETRY_CNT) != 0) a.retryCnt(v.retryCnt);
        if ((mask & QpAttrMask.RNR_RETRY) != 0) a.rnrRetry(v.rnrRetry);
        if ((mask & QpAttrMask.RQ_PSN) != 0) a.rqPsn(v.rqPsn);
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0) a.maxRdAtomic(v.maxRdAtomic);
        if ((mask & QpAttrMask.MIN_RNR_TIMER) != 0) a.minRnrTimer(v.minRnrTimer);
        if ((mask & QpAttrMask.SQ_PSN) != 0) a.sqPsn(v.sqPsn);
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) a.maxDestRdAtomic(v.maxDestRdAtomic);
        if ((mask & QpAttrMask.CAP) != 0) a.cap(v.cap);
        if ((mask & QpAttrMask.DEST_QPN) != 0) a.destQpNum(v.destQpNum);
        return a;
    }

    /** Reads a full query into {@code out}. */
    static void decode(MemorySegment m, QpAttr out) {
        int s = m.get(ValueLayout.JAVA_INT, QP_STATE);
        out.qpState = s >= 0 && s <= QpState.ERR.value() ? QpState.of(s) : QpState.ERR;
        int cs = m.get(ValueLayout.JAVA_INT, CUR_QP_STATE);
        out.curQpState = cs >= 0 && cs <= QpState.ERR.value() ? QpState.of(cs) : out.qpState;
        out.pathMtu = Mtu.ofValue(m.get(ValueLayout.JAVA_INT, PATH_MTU));
        out.qkey = m.get(ValueLayout.JAVA_INT, QKEY);
        out.rqPsn = m.get(ValueLayout.JAVA_INT, RQ_PSN);
        out.sqPsn = m.get(ValueLayout.JAVA_INT, SQ_PSN);
        out.destQpNum = m.get(ValueLayout.JAVA_INT, DEST_QP_NUM);
        out.qpAccessFlags = m.get(ValueLayout.JAVA_INT, ACCESS);
        out.cap = new QpCap(m.get(ValueLayout.JAVA_INT, CAP_SEND_WR), m.get(ValueLayout.JAVA_INT, CAP_RECV_WR),
                m.get(ValueLayout.JAVA_INT, CAP_SEND_SGE), m.get(ValueLayout.JAVA_INT, CAP_RECV_SGE),
                m.get(ValueLayout.JAVA_INT, CAP_INLINE));
        out.ahAttr = AhCodec.decode(m, AH_ATTR);
        out.pkeyIndex = m.get(ValueLayout.JAVA_SHORT, PKEY_INDEX) & 0xFFFF;
        out.enSqdAsyncNotify = m.get(ValueLayout.JAVA_BYTE, EN_SQD_ASYNC_NOTIFY) != 0;
        out.sqDraining = m.get(ValueLayout.JAVA_BYTE, SQ_DRAINING) != 0;
        out.maxRdAtomic = m.get(ValueLayout.JAVA_BYTE, MAX_RD_ATOMIC) & 0xFF;
        out.maxDestRdAtomic = m.get(ValueLayout.JAVA_BYTE, MAX_DEST_RD_ATOMIC) & 0xFF;
        out.minRnrTimer = m.get(ValueLayout.JAVA_BYTE, MIN_RNR_TIMER) & 0xFF;
        out.portNum = m.get(ValueLayout.JAVA_BYTE, PORT_NUM) & 0xFF;
        out.timeout = m.get(ValueLayout.JAVA_BYTE, TIMEOUT) & 0xFF;
        out.retryCnt = m.get(ValueLayout.JAVA_BYTE, RETRY_CNT) & 0xFF;
        out.rnrRetry = m.get(ValueLayout.JAVA_BYTE, RNR_RETRY) & 0xFF;
    }
}
