// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Device attributes and limits ({@code struct ibv_device_attr}), as {@link Context#queryDevice()}
 * returns them. Every {@code max_*} is an upper bound the provider enforces (S-LIM-1, S-DEV-1); the
 * soft device reports Linux rxe's values (with more QPs), the native provider the device's.
 *
 * @param fwVer                 {@code fw_ver}: the firmware version text
 * @param nodeGuid              {@code node_guid}, as {@link Device#guid()}
 * @param sysImageGuid          {@code sys_image_guid}
 * @param maxMrSize             {@code max_mr_size}: the largest region, in bytes
 * @param pageSizeCap           {@code page_size_cap}: the supported page sizes, one bit per size
 * @param vendorId              {@code vendor_id}: the IEEE OUI of the vendor
 * @param vendorPartId          {@code vendor_part_id}
 * @param hwVer                 {@code hw_ver}
 * @param maxQp                 {@code max_qp}: QPs at once
 * @param maxQpWr               {@code max_qp_wr}: work requests per send or receive queue
 * @param deviceCapFlags        {@code device_cap_flags}: {@code IBV_DEVICE_*} bits
 * @param maxSge                {@code max_sge}: SGEs per send or receive work request
 * @param maxSgeRd              {@code max_sge_rd}: SGEs per RDMA READ
 * @param maxCq                 {@code max_cq}: CQs at once
 * @param maxCqe                {@code max_cqe}: entries per CQ
 * @param maxMr                 {@code max_mr}: memory regions at once
 * @param maxPd                 {@code max_pd}: protection domains at once
 * @param maxQpRdAtom           {@code max_qp_rd_atom}: incoming RDMA READ/atomic requests per QP
 *                              (the limit of {@code max_dest_rd_atomic})
 * @param maxEeRdAtom           {@code max_ee_rd_atom}: reliable datagram, which rdma4j does not offer
 * @param maxResRdAtom          {@code max_res_rd_atom}: RDMA READ/atomic responder resources of the device
 * @param maxQpInitRdAtom       {@code max_qp_init_rd_atom}: outstanding RDMA READ/atomic requests a QP
 *                              issues (the limit of {@code max_rd_atomic})
 * @param maxEeInitRdAtom       {@code max_ee_init_rd_atom}: reliable datagram, which rdma4j does not offer
 * @param atomicCap             {@code atomic_cap}: how atomic the atomics are
 * @param maxEe                 {@code max_ee}: reliable datagram, which rdma4j does not offer
 * @param maxRdd                {@code max_rdd}: reliable datagram, which rdma4j does not offer
 * @param maxMw                 {@code max_mw}: memory windows at once
 * @param maxRawIpv6Qp          {@code max_raw_ipv6_qp}
 * @param maxRawEthyQp          {@code max_raw_ethy_qp}
 * @param maxMcastGrp           {@code max_mcast_grp}: multicast groups
 * @param maxMcastQpAttach      {@code max_mcast_qp_attach}: QPs per multicast group
 * @param maxTotalMcastQpAttach {@code max_total_mcast_qp_attach}: attachments in all
 * @param maxAh                 {@code max_ah}: address handles at once
 * @param maxFmr                {@code max_fmr}: fast memory regions (obsolete)
 * @param maxMapPerFmr          {@code max_map_per_fmr} (obsolete)
 * @param maxSrq                {@code max_srq}: SRQs at once
 * @param maxSrqWr              {@code max_srq_wr}: receives per SRQ
 * @param maxSrqSge             {@code max_srq_sge}: SGEs per SRQ receive
 * @param maxPkeys              {@code max_pkeys}: P_Key table entries per port
 * @param localCaAckDelay       {@code local_ca_ack_delay}: the device's ACK delay exponent (4.096 us * 2^n)
 * @param physPortCnt           {@code phys_port_cnt}: ports, numbered from 1
 * @param maxInlineData         the most inline data a QP can ask for, in bytes (rdma4j's own, not a
 *                              field of {@code ibv_device_attr}; the limit of {@link QpCap#maxInlineData})
 * @param numCompVectors        {@code ibv_context.num_comp_vectors}: completion vectors for
 *                              {@link Context#createCq(int, CompletionChannel, int)}
 */
public record DeviceAttr(
        String fwVer, long nodeGuid, long sysImageGuid, long maxMrSize, long pageSizeCap,
        int vendorId, int vendorPartId, int hwVer, int maxQp, int maxQpWr, int deviceCapFlags,
        int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom,
        int maxEeRdAtom, int maxResRdAtom, int maxQpInitRdAtom, int maxEeInitRdAtom, AtomicCap atomicCap,
        int maxEe, int maxRdd, int maxMw, int maxRawIpv6Qp, int maxRawEthyQp, int maxMcastGrp,
        int maxMcastQpAttach, int maxTotalMcastQpAttach, int maxAh, int maxFmr, int maxMapPerFmr,
        int maxSrq, int maxSrqWr, int maxSrqSge, int maxPkeys, int localCaAckDelay, int physPortCnt,
        int maxInlineData, int numCompVectors) {

    /** Atomic capability ({@code enum ibv_atomic_cap}). */
    public enum AtomicCap {
        /** {@code IBV_ATOMIC_NONE}: no atomics. */
        ATOMIC_NONE,
        /** {@code IBV_ATOMIC_HCA}: atomic against the atomics of this device's QPs (S-DATA-5). */
        ATOMIC_HCA,
        /** {@code IBV_ATOMIC_GLOB}: atomic against the CPU and every other device too. */
        ATOMIC_GLOB
    }
}
