// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * One entry of a port's GID table ({@code struct ibv_gid_entry}), from {@link Context#queryGidEntry}.
 *
 * @param index   {@code gid_index}: the entry's index in the table
 * @param portNum {@code port_num}: the port, from 1
 * @param gid     {@code gid}: the GID
 * @param type    {@code gid_type}: which packets use the entry
 */
public record GidEntry(int index, int portNum, Gid gid, GidType type) {
    /** GID type ({@code enum ibv_gid_type}). */
    public enum GidType {
        /** {@code IBV_GID_TYPE_IB}: an InfiniBand GID. */
        IB,
        /** {@code IBV_GID_TYPE_ROCE_V1}: RoCE v1 (Ethernet frames with an IB GRH). */
        ROCE_V1,
        /** {@code IBV_GID_TYPE_ROCE_V2}: RoCE v2 (UDP/IP, port 4791): the soft device's type. */
        ROCE_V2;

        /** {@return the text ibv_devinfo -v prints: "IB", "RoCE v1", "RoCE v2"} */
        public String label() {
            return switch (this) {
                case IB -> "IB";
                case ROCE_V1 -> "RoCE v1";
                case ROCE_V2 -> "RoCE v2";
            };
        }
    }
}
