// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.util.Objects;

/**
 * What a queue pair brings to an {@link IwarpConnection}: its STag table, where its completions go, the
 * depths of its send and receive queues, and the TCP segment size FPDUs are cut to.
 *
 * @param resolver    the device's STag table (remote Writes and Reads, Read Response sinks, invalidation)
 * @param completions where completions go
 * @param sendDepth   the most send work requests posted and not completed (max_send_wr)
 * @param recvDepth   the most receives posted and not completed (max_recv_wr)
 * @param mssBytes    the MSS each FPDU is cut to (siw uses the socket's)
 */
public record IwarpQp(StagResolver resolver, IwarpCompletions completions, int sendDepth, int recvDepth,
                      int mssBytes) {
    /** The MSS of an Ethernet path with a 1500-byte MTU. */
    public static final int ETHERNET_MSS = 1460;

    /** Checks the values. */
    public IwarpQp {
        Objects.requireNonNull(resolver, "resolver");
        Objects.requireNonNull(completions, "completions");
        if (sendDepth < 1 || recvDepth < 1) {
            throw new IllegalArgumentException("queue depths " + sendDepth + "/" + recvDepth + ": at least 1");
        }
        FpduEncoder.maxPayload(mssBytes, Rdmap.READ_REQUEST_HEADER_LENGTH);
    }

    /**
     * {@return a queue pair with the Ethernet MSS}
     *
     * @param resolver    the STag table
     * @param completions where completions go
     * @param depth       both queue depths
     */
    public static IwarpQp of(StagResolver resolver, IwarpCompletions completions, int depth) {
        return new IwarpQp(resolver, completions, depth, depth, ETHERNET_MSS);
    }
}
