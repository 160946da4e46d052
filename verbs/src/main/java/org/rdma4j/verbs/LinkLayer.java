// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Port link layer, mirroring {@code IBV_LINK_LAYER_*}. */
public enum LinkLayer {
    UNSPECIFIED, INFINIBAND, ETHERNET;

    /** The text ibv_devinfo prints: "InfiniBand", "Ethernet". */
    public String label() {
        return switch (this) {
            case UNSPECIFIED -> "Unknown";
            case INFINIBAND -> "InfiniBand";
            case ETHERNET -> "Ethernet";
        };
    }
}
