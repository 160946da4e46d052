// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Port attributes ({@code struct ibv_port_attr}). */
public record PortAttr(
        PortState state, Mtu maxMtu, Mtu activeMtu, int gidTblLen, int portCapFlags, long maxMsgSz,
        int badPkeyCntr, int qkeyViolCntr, int pkeyTblLen, int lid, int smLid, int lmc, int maxVlNum,
        int smSl, int subnetTimeout, int initTypeReply, int activeWidth, int activeSpeed, int physState,
        LinkLayer linkLayer) {
}
