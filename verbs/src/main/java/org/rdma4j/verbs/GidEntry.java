// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** One entry of a port's GID table ({@code struct ibv_gid_entry}). */
public record GidEntry(int index, int portNum, Gid gid, GidType type) {
    /** GID type ({@code enum ibv_gid_type}). */
    public enum GidType {
        IB, ROCE_V1, ROCE_V2;

        /** The text ibv_devinfo -v prints: "IB", "RoCE v1", "RoCE v2". */
        public String label() {
            return switch (this) {
                case IB -> "IB";
                case ROCE_V1 -> "RoCE v1";
                case ROCE_V2 -> "RoCE v2";
            };
        }
    }
}
