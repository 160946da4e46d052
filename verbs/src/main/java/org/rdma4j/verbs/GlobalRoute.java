// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** The GRH part of an address vector ({@code struct ibv_global_route}). Required on RoCE. */
public record GlobalRoute(Gid dgid, int flowLabel, int sgidIndex, int hopLimit, int trafficClass) {
    public GlobalRoute {
        if (dgid == null) {
            throw new IllegalArgumentException("dgid is required");
        }
    }

    /**
     * A route to {@code dgid} from local GID {@code sgidIndex}: hop limit 64 (the usual IP TTL, so the
     * packets cross routers), traffic class 0, no flow label. Give the hop limit yourself for anything
     * else (ibv_rc_pingpong uses 1).
     */
    public static GlobalRoute to(Gid dgid, int sgidIndex) {
        return new GlobalRoute(dgid, 0, sgidIndex, 64, 0);
    }
}
