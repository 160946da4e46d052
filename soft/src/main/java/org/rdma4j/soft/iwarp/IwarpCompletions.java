// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * Where an {@link IwarpConnection} hands its work completions: the send queue's (Send, Write, Read) and
 * the receive queue's, each in the order siw produces them. Called on the agent thread (or, for work
 * posted after the connection ended, on the posting thread), always under the connection's lock, so the
 * calls of one connection never overlap; an implementation must not block. Byte lengths are the
 * message's on success and 0 on error, where only the work request id and the status mean anything.
 */
public interface IwarpCompletions {
    /**
     * A send queue work request completed.
     *
     * @param wrId        the id it was posted with
     * @param status      SUCCESS, or the error
     * @param opcode      {@link WcOpcode#SEND}, {@link WcOpcode#RDMA_WRITE} or {@link WcOpcode#RDMA_READ}
     * @param byteLength  the message's length on success
     */
    void sendCompleted(long wrId, WcStatus status, WcOpcode opcode, long byteLength);

    /**
     * A receive completed.
     *
     * @param wrId            the id it was posted with
     * @param status          SUCCESS, or the error
     * @param byteLength      the Send's length on success
     * @param invalidatedStag the STag a Send with Invalidate invalidated, else 0
     * @param solicited       whether the Send asked for a solicited event
     */
    void recvCompleted(long wrId, WcStatus status, long byteLength, int invalidatedStag, boolean solicited);
}
