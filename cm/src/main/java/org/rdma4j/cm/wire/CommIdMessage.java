// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;

/**
 * A CM message that starts with the sender's and the receiver's communication ids (MRA, REJ, RTU, DREQ,
 * DREP): 24 local communication id, 28 remote communication id.
 *
 * @param <T> the concrete message, so that the setters chain
 */
public abstract class CommIdMessage<T extends CommIdMessage<T>> extends CmMessage {
    /** Offset of the sender's communication id. */
    public static final int LOCAL_COMM_ID_OFFSET = 24;
    /** Offset of the receiver's communication id. */
    public static final int REMOTE_COMM_ID_OFFSET = 28;

    /** For subclasses. */
    protected CommIdMessage() {
    }

    @SuppressWarnings("unchecked")
    private T self() {
        return (T) this;
    }

    @Override
    public T wrap(MemorySegment segment) {
        super.wrap(segment);
        return self();
    }

    /** {@return the sender's communication id (the Local Communication ID field)} */
    public int localCommId() { return u32(LOCAL_COMM_ID_OFFSET); }
    /**
     * Sets the Local Communication ID field.
     *
     * @param v the sender's communication id
     * @return this
     */
    public T localCommId(int v) { u32(LOCAL_COMM_ID_OFFSET, v); return self(); }
    /** {@return the receiver's communication id (the Remote Communication ID field)} */
    public int remoteCommId() { return u32(REMOTE_COMM_ID_OFFSET); }
    /**
     * Sets the Remote Communication ID field.
     *
     * @param v the receiver's communication id
     * @return this
     */
    public T remoteCommId(int v) { u32(REMOTE_COMM_ID_OFFSET, v); return self(); }
}
