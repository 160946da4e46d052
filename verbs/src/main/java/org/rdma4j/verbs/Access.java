// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Memory and QP access rights, the bits of {@code enum ibv_access_flags}. They are plain {@code int}
 * flags, as in libibverbs and on the data path: combine them with {@code |}
 * ({@code Access.LOCAL_WRITE | Access.REMOTE_WRITE}) wherever an access mask is taken (memory
 * registration, memory window binds, QP access flags).
 */
public final class Access {
    /**
     * {@code IBV_ACCESS_LOCAL_WRITE}: the device may write the memory (receives, READ responses, atomic
     * results); needed by REMOTE_WRITE and REMOTE_ATOMIC (S-MR-1).
     */
    public static final int LOCAL_WRITE = 1;
    /** {@code IBV_ACCESS_REMOTE_WRITE}: peers may RDMA WRITE the memory (with the rkey). */
    public static final int REMOTE_WRITE = 1 << 1;
    /** {@code IBV_ACCESS_REMOTE_READ}: peers may RDMA READ the memory. */
    public static final int REMOTE_READ = 1 << 2;
    /** {@code IBV_ACCESS_REMOTE_ATOMIC}: peers may run atomics on the memory. */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** {@code IBV_ACCESS_MW_BIND}: memory windows may be bound to the region. */
    public static final int MW_BIND = 1 << 4;
    /**
     * {@code IBV_ACCESS_ZERO_BASED}: addresses count from the region's start. The soft device refuses
     * it (EOPNOTSUPP); the native provider leaves it to the device.
     */
    public static final int ZERO_BASED = 1 << 5;
    /**
     * {@code IBV_ACCESS_ON_DEMAND}: on-demand paging. The soft device refuses it (EOPNOTSUPP); the
     * native provider leaves it to the device.
     */
    public static final int ON_DEMAND = 1 << 6;
    /** Every bit defined here. */
    public static final int ALL = (1 << 7) - 1;

    private static final String[] NAMES = {
        "LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC", "MW_BIND", "ZERO_BASED", "ON_DEMAND"};

    private Access() {}

    /**
     * The text of a mask for messages.
     *
     * @param mask the bits
     * @return e.g. {@code "LOCAL_WRITE|REMOTE_READ"}; {@code "0"} for none; an unknown bit {@code n} as
     *     {@code BITn}
     */
    public static String toString(int mask) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 32; i++) {
            if ((mask & (1 << i)) != 0) {
                if (!sb.isEmpty()) {
                    sb.append('|');
                }
                sb.append(i < NAMES.length ? NAMES[i] : "BIT" + i);
            }
        }
        return sb.isEmpty() ? "0" : sb.toString();
    }
}
