// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Port attributes ({@code struct ibv_port_attr}), as {@link Context#queryPort(int)} returns them.
 *
 * @param state         {@code state}: the logical port state (S-PORT-1)
 * @param maxMtu        {@code max_mtu}: the largest MTU the port supports
 * @param activeMtu     {@code active_mtu}: the MTU in use, the limit of a QP's path MTU (S-QP-5)
 * @param gidTblLen     {@code gid_tbl_len}: GID table entries
 * @param portCapFlags  {@code port_cap_flags}: {@code IBV_PORT_*} bits
 * @param maxMsgSz      {@code max_msg_sz}: the largest message, in bytes
 * @param badPkeyCntr   {@code bad_pkey_cntr}: packets dropped for a bad P_Key
 * @param qkeyViolCntr  {@code qkey_viol_cntr}: datagrams dropped for a bad Q_Key
 * @param pkeyTblLen    {@code pkey_tbl_len}: P_Key table entries
 * @param lid           {@code lid}: the port's LID; 0 on RoCE
 * @param smLid         {@code sm_lid}: the subnet manager's LID; 0 on RoCE
 * @param lmc           {@code lmc}: the LID mask count
 * @param maxVlNum      {@code max_vl_num}: virtual lanes
 * @param smSl          {@code sm_sl}: the subnet manager's service level
 * @param subnetTimeout {@code subnet_timeout}
 * @param initTypeReply {@code init_type_reply}
 * @param activeWidth   {@code active_width}: the link width code (1 = 1x, 2 = 4x, ...)
 * @param activeSpeed   {@code active_speed}: the link speed code
 * @param physState     {@code phys_state}: the physical state code (5 = LinkUp, 3 = Disabled, ...)
 * @param linkLayer     {@code link_layer}: ETHERNET for RoCE
 */
public record PortAttr(
        PortState state, Mtu maxMtu, Mtu activeMtu, int gidTblLen, int portCapFlags, long maxMsgSz,
        int badPkeyCntr, int qkeyViolCntr, int pkeyTblLen, int lid, int smLid, int lmc, int maxVlNum,
        int smSl, int subnetTimeout, int initTypeReply, int activeWidth, int activeSpeed, int physState,
        LinkLayer linkLayer) {
}
