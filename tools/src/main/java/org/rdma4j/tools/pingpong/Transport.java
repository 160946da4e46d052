package org.rdma4j.tools.pingpong;

/** Which of the four rdma-core examples a run behaves like. */
enum Transport {
    /** ibv_rc_pingpong: one RC queue pair. */
    RC("ibv_rc_pingpong", 4096),
    /** ibv_uc_pingpong: one UC queue pair. */
    UC("ibv_uc_pingpong", 4096),
    /** ibv_ud_pingpong: one UD queue pair, messages up to the port MTU, a 40-byte GRH in front of each receive. */
    UD("ibv_ud_pingpong", 1024),
    /** ibv_srq_pingpong: several RC queue pairs sharing one receive queue. */
    SRQ("ibv_srq_pingpong", 4096);

    private final String tool;
    private final int defaultSize;

    Transport(String tool, int defaultSize) {
        this.tool = tool;
        this.defaultSize = defaultSize;
    }

    /** The rdma-core program this transport mirrors. */
    String tool() {
        return tool;
    }

    /** The -s default of that program. */
    int defaultSize() {
        return defaultSize;
    }
}
