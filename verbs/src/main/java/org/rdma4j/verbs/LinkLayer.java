// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Port link layer, mirroring {@code IBV_LINK_LAYER_*}. */
public enum LinkLayer {
    /** {@code IBV_LINK_LAYER_UNSPECIFIED}: not reported. */
    UNSPECIFIED,
    /** {@code IBV_LINK_LAYER_INFINIBAND}: InfiniBand; a route may be a LID alone. */
    INFINIBAND,
    /** {@code IBV_LINK_LAYER_ETHERNET}: RoCE; every address is a GID, so a GRH is required (S-DEV-4). */
    ETHERNET;

    /** {@return the text ibv_devinfo prints: "InfiniBand", "Ethernet", or "Unknown"} */
    public String label() {
        return switch (this) {
            case UNSPECIFIED -> "Unknown";
            case INFINIBAND -> "InfiniBand";
            case ETHERNET -> "Ethernet";
        };
    }
}
