// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * The GRH part of an address vector ({@code struct ibv_global_route}). Required on RoCE (S-DEV-4), where
 * it becomes the IP header.
 *
 * @param dgid         {@code dgid}: the destination GID (on RoCE v2 the destination IP address)
 * @param flowLabel    {@code flow_label}: the 20-bit IPv6 flow label
 * @param sgidIndex    {@code sgid_index}: the index of the local GID to send from
 * @param hopLimit     {@code hop_limit}: the IP TTL / hop limit, 0 to 255
 * @param trafficClass {@code traffic_class}: the IP TOS / traffic class, 0 to 255
 */
public record GlobalRoute(Gid dgid, int flowLabel, int sgidIndex, int hopLimit, int trafficClass) {
    /**
     * Checks that a destination is given.
     *
     * @throws IllegalArgumentException when {@code dgid} is null
     */
    public GlobalRoute {
        if (dgid == null) {
            throw new IllegalArgumentException("dgid is required");
        }
    }

    /**
     * A route to {@code dgid} from local GID {@code sgidIndex}: hop limit 64 (the usual IP TTL, so the
     * packets cross routers), traffic class 0, no flow label. Give the hop limit yourself for anything
     * else (ibv_rc_pingpong uses 1).
     *
     * @param dgid      the destination GID
     * @param sgidIndex the local GID index
     * @return the route
     */
    public static GlobalRoute to(Gid dgid, int sgidIndex) {
        return new GlobalRoute(dgid, 0, sgidIndex, 64, 0);
    }
}
