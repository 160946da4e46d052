// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.rdma4j.verbs.QpAttrMask.ACCESS_FLAGS;
import static org.rdma4j.verbs.QpAttrMask.DEST_QPN;
import static org.rdma4j.verbs.QpAttrMask.MAX_DEST_RD_ATOMIC;
import static org.rdma4j.verbs.QpAttrMask.MAX_QP_RD_ATOMIC;
import static org.rdma4j.verbs.QpAttrMask.MIN_RNR_TIMER;
import static org.rdma4j.verbs.QpAttrMask.PATH_MTU;
import static org.rdma4j.verbs.QpAttrMask.PKEY_INDEX;
import static org.rdma4j.verbs.QpAttrMask.PORT;
import static org.rdma4j.verbs.QpAttrMask.RETRY_CNT;
import static org.rdma4j.verbs.QpAttrMask.RNR_RETRY;
import static org.rdma4j.verbs.QpAttrMask.TIMEOUT;

import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.VerbsException;

/**
 * The value ranges of {@code ibv_modify_qp} and {@code ibv_create_qp} attributes that hold on every
 * device, given the device's own limits: the port exists, the P_Key index is inside the table, only
 * QP access bits, a path MTU when one is named, a 24-bit destination QPN, the 5-bit timeout and RNR
 * timer, the 3-bit retry counts, the RDMA READ/atomic depths and the QP capacities below the device's
 * maxima (rxe's {@code rxe_qp_chk_attr} and {@code rxe_qp_chk_cap}). Which attributes a transition
 * needs is {@link QpTransitions}; the address vector is the provider's to check. Every refusal is
 * EINVAL. Stateless; thread safe.
 */
public final class QpAttrRanges {
    /** The access bits a QP takes (a region's ZERO_BASED and ON_DEMAND are not QP access). */
    public static final int QP_ACCESS_BITS = Access.LOCAL_WRITE | Access.REMOTE_WRITE
            | Access.REMOTE_READ | Access.REMOTE_ATOMIC | Access.MW_BIND;

    private QpAttrRanges() {}

    /**
     * Checks the attributes of {@code attr} selected by {@code mask} against the limits of
     * {@code device} (ports, P_Key table, max_qp_rd_atom).
     *
     * @param attr   the attributes
     * @param mask   the {@link org.rdma4j.verbs.QpAttrMask} bits to check
     * @param device the device's attributes
     *
     * @throws VerbsException EINVAL naming the first attribute out of range
     */
    public static void check(QpAttr attr, int mask, DeviceAttr device) {
        check(attr, mask, device.physPortCnt(), device.maxPkeys(), device.maxQpRdAtom());
    }

    /**
     * Checks the attributes of {@code attr} selected by {@code mask} for a device with ports
     * 1..{@code portCount}, a P_Key table of {@code pkeyTableLength} entries and at most
     * {@code maxRdAtomic} outstanding RDMA READ/atomic operations per QP, in either direction.
     *
     * @param attr            the attributes
     * @param mask            the {@link org.rdma4j.verbs.QpAttrMask} bits to check
     * @param portCount       the number of ports
     * @param pkeyTableLength the P_Key table's length
     * @param maxRdAtomic     the limit of {@code max_rd_atomic} and {@code max_dest_rd_atomic}
     *
     * @throws VerbsException EINVAL naming the first attribute out of range
     */
    public static void check(QpAttr attr, int mask, int portCount, int pkeyTableLength, int maxRdAtomic) {
        check(attr, mask, portCount, pkeyTableLength, maxRdAtomic, maxRdAtomic);
    }

    /**
     * Checks the attributes of {@code attr} selected by {@code mask} for a device with ports
     * 1..{@code portCount} and a P_Key table of {@code pkeyTableLength} entries, which starts at most
     * {@code maxInitRdAtomic} RDMA READ/atomic operations per QP ({@code max_qp_init_rd_atom}, the bound
     * of {@code max_rd_atomic}) and answers at most {@code maxDestRdAtomic} ({@code max_qp_rd_atom}, the
     * bound of {@code max_dest_rd_atomic}).
     *
     * @param attr            the attributes
     * @param mask            the {@link org.rdma4j.verbs.QpAttrMask} bits of the attributes to check
     * @param portCount       the device's number of ports
     * @param pkeyTableLength the P_Key table length of its ports
     * @param maxInitRdAtomic the device's {@code max_qp_init_rd_atom}
     * @param maxDestRdAtomic the device's {@code max_qp_rd_atom}
     * @throws VerbsException EINVAL naming the first attribute out of range
     */
    public static void check(QpAttr attr, int mask, int portCount, int pkeyTableLength, int maxInitRdAtomic,
            int maxDestRdAtomic) {
        if ((mask & PORT) != 0 && (attr.portNum < 1 || attr.portNum > portCount)) {
            throw new VerbsException(Errno.EINVAL, "port " + attr.portNum + " does not exist");
        }
        if ((mask & PKEY_INDEX) != 0 && (attr.pkeyIndex < 0 || attr.pkeyIndex >= pkeyTableLength)) {
            throw new VerbsException(Errno.EINVAL, "P_Key index " + attr.pkeyIndex + " is outside the table");
        }
        if ((mask & ACCESS_FLAGS) != 0 && (attr.qpAccessFlags & ~QP_ACCESS_BITS) != 0) {
            throw new VerbsException(Errno.EINVAL, "QP access flags 0x" + Integer.toHexString(attr.qpAccessFlags));
        }
        if ((mask & PATH_MTU) != 0 && attr.pathMtu == null) {
            throw new VerbsException(Errno.EINVAL, "no path MTU");
        }
        if ((mask & DEST_QPN) != 0 && (attr.destQpNum & ~0xFFFFFF) != 0) {
            throw new VerbsException(Errno.EINVAL, "dest_qp_num 0x" + Integer.toHexString(attr.destQpNum)
                    + " is not a 24-bit QPN");
        }
        range(mask, TIMEOUT, "timeout", attr.timeout, 31);
        range(mask, RETRY_CNT, "retry_cnt", attr.retryCnt, 7);
        range(mask, RNR_RETRY, "rnr_retry", attr.rnrRetry, 7);
        range(mask, MIN_RNR_TIMER, "min_rnr_timer", attr.minRnrTimer, 31);
        range(mask, MAX_QP_RD_ATOMIC, "max_rd_atomic", attr.maxRdAtomic, maxInitRdAtomic);
        range(mask, MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic", attr.maxDestRdAtomic, maxDestRdAtomic);
    }

    /**
     * Checks the capacities a QP asks for at creation: {@code maxQpWr} WRs and {@code maxSge} SGEs per
     * queue, {@code maxInline} bytes of inline data; the receive side only when {@code withRecvQueue}
     * (a QP on an SRQ has none of its own).
     *
     * @param cap           the capacities asked for
     * @param withRecvQueue whether the QP has a receive queue of its own
     * @param maxQpWr       the device's {@code max_qp_wr}
     * @param maxSge        the device's {@code max_sge}
     * @param maxInline     the device's inline data limit in bytes
     *
     * @throws VerbsException EINVAL naming the first capacity above the device maximum
     */
    public static void checkCap(QpCap cap, boolean withRecvQueue, int maxQpWr, int maxSge, int maxInline) {
        checkCap("max_send_wr", cap.maxSendWr, maxQpWr);
        checkCap("max_send_sge", cap.maxSendSge, maxSge);
        checkCap("max_inline_data", cap.maxInlineData, maxInline);
        if (withRecvQueue) {
            checkCap("max_recv_wr", cap.maxRecvWr, maxQpWr);
            checkCap("max_recv_sge", cap.maxRecvSge, maxSge);
        }
    }

    private static void checkCap(String name, int value, int max) {
        if (value < 0 || value > max) {
            throw new VerbsException(Errno.EINVAL, name + " " + Integer.toUnsignedString(value)
                    + " exceeds the device maximum " + max);
        }
    }

    private static void range(int mask, int bit, String name, int value, int max) {
        if ((mask & bit) != 0 && (value < 0 || value > max)) {
            throw new VerbsException(Errno.EINVAL, name + " " + value + " is outside 0.." + max);
        }
    }
}
