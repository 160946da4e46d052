// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A memory window ({@code struct ibv_mw}): remote access to part of an MR, granted and revoked
 * without re-registering. Type 1 is bound with {@link #bind}, type 2 with a
 * {@link WrOpcode#BIND_MW} work request. Thread safe.
 */
public interface MemoryWindow extends VerbsResource {
    /**
     * The protection domain the window was allocated in ({@code ibv_mw.pd}); it binds regions of this
     * PD only.
     *
     * @return the PD
     */
    ProtectionDomain pd();

    /**
     * {@code ibv_mw.type}.
     *
     * @return the window type
     */
    MwType type();

    /**
     * {@code ibv_mw.rkey}: the key peers use while the window is bound; changes with every bind.
     *
     * @return the current 32-bit rkey
     */
    int rkey();

    /**
     * {@code ibv_inc_rkey(rkey())}: the rkey a type-2 BIND_MW must carry next (the key's low 8 bits
     * incremented).
     *
     * @return the next rkey
     */
    int nextRkey();

    /**
     * {@code ibv_bind_mw} (type 1 only, EINVAL otherwise): posts a bind on {@code qp}'s send queue
     * granting {@code access} ({@link Access} bits) to [{@code addr}, {@code addr+length}) of {@code mr};
     * length 0 unbinds. Returns the new rkey. The bind completes on the send CQ (signaled if
     * {@code sendFlags} has SIGNALED). The region cannot be deregistered while the window is bound
     * to it (EBUSY, S-MR-4); a bind that fails on the queue completes MW_BIND_ERR.
     *
     * @param qp        the QP (of the window's PD, in RTS) whose send queue carries the bind
     * @param wrId      the work request id of the bind's completion
     * @param sendFlags {@link SendFlag} bits
     * @param mr        the region to bind to (registered with {@link Access#MW_BIND})
     * @param addr      the first address the window grants, inside {@code mr}
     * @param length    the window's length in bytes; 0 unbinds
     * @param access    the remote {@link Access} bits granted
     * @return the window's new rkey
     * @throws VerbsException EINVAL for a type-2 window or a bad argument; the errors of
     *     {@link QueuePair#postSend}; EOPNOTSUPP on a native device without memory windows
     */
    int bind(QueuePair qp, long wrId, int sendFlags, MemoryRegion mr, long addr, long length, int access);
}
