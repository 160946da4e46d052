// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A memory window ({@code struct ibv_mw}): remote access to part of an MR, granted and revoked
 * without re-registering. Type 1 is bound with {@link #bind}, type 2 with a
 * {@link WrOpcode#BIND_MW} work request. Thread safe.
 */
public interface MemoryWindow extends VerbsResource {
    ProtectionDomain pd();

    MwType type();

    /** The current rkey; changes with every bind. */
    int rkey();

    /** {@code ibv_inc_rkey(rkey())}: the rkey a type-2 BIND_MW must carry next. */
    int nextRkey();

    /**
     * {@code ibv_bind_mw} (type 1 only, EINVAL otherwise): posts a bind on {@code qp}'s send queue
     * granting {@code access} ({@link Access} bits) to [{@code addr}, {@code addr+length}) of {@code mr};
     * length 0 unbinds. Returns the new rkey. The bind completes on the send CQ (signaled if
     * {@code sendFlags} has SIGNALED).
     */
    int bind(QueuePair qp, long wrId, int sendFlags, MemoryRegion mr, long addr, long length, int access);
}
