// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

/** Which of the four rdma-core examples a run behaves like. */
enum Transport {
    /** ibv_rc_pingpong: one RC queue pair. */
    RC(4096),
    /** ibv_uc_pingpong: one UC queue pair. */
    UC(4096),
    /** ibv_ud_pingpong: one UD queue pair, messages up to the port MTU, a 40-byte GRH in front of each receive. */
    UD(1024),
    /** ibv_srq_pingpong: several RC queue pairs sharing one receive queue. */
    SRQ(4096);

    private final int defaultSize;

    Transport(int defaultSize) {
        this.defaultSize = defaultSize;
    }

    /** The -s default of the C tool. */
    int defaultSize() {
        return defaultSize;
    }
}
