// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.QpAttrRanges;

/**
 * The device limits the verbs SPI's provider-neutral rules need ({@link QpAttrRanges}), read once per
 * context from {@code ibv_query_device} and {@code ibv_query_port}, so that the native provider refuses
 * what every provider refuses, with the same errno and message, before the kernel sees it (rxe takes
 * a retry_cnt of 8, which the rules refuse). Immutable; thread safe.
 *
 * @param portCount {@code phys_port_cnt}
 * @param pkeyTableLength the largest {@code pkey_tbl_len} of the ports, at least 1 (siw reports no
 *     P_Key table and takes index 0)
 * @param maxInitRdAtomic {@code max_qp_init_rd_atom}, the bound of {@code max_rd_atomic}
 * @param maxDestRdAtomic {@code max_qp_rd_atom}, the bound of {@code max_dest_rd_atomic}
 * @param maxQpWr {@code max_qp_wr}
 * @param maxSge {@code max_sge}
 */
record NativeLimits(int portCount, int pkeyTableLength, int maxInitRdAtomic, int maxDestRdAtomic, int maxQpWr,
        int maxSge) {

    /** The limits of {@code device} whose ports have P_Key tables of {@code pkeyTableLengths} entries. */
    static NativeLimits of(DeviceAttr device, int... pkeyTableLengths) {
        int pkeys = 1;
        for (int n : pkeyTableLengths) {
            pkeys = Math.max(pkeys, n);
        }
        return new NativeLimits(device.physPortCnt(), pkeys, device.maxQpInitRdAtom(), device.maxQpRdAtom(),
                device.maxQpWr(), device.maxSge());
    }

    /**
     * The SPI's range rules for {@code ibv_modify_qp}.
     *
     * @throws VerbsException EINVAL naming the first attribute out of range
     */
    void checkModify(QpAttr attr, int mask) {
        QpAttrRanges.check(attr, mask, portCount, pkeyTableLength, maxInitRdAtomic, maxDestRdAtomic);
    }

    /**
     * The SPI's capacity rules for {@code ibv_create_qp}; the inline limit is not in
     * {@code ibv_device_attr}, so the provider alone judges {@code max_inline_data}.
     *
     * @throws VerbsException EINVAL naming the first capacity above the device's
     */
    void checkCreate(QpCap cap, boolean withRecvQueue) {
        QpAttrRanges.checkCap(cap, withRecvQueue, maxQpWr, maxSge, Integer.MAX_VALUE);
    }
}
