// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Memory and QP access rights, the bits of {@code enum ibv_access_flags}. They are plain {@code int}
 * flags, as in libibverbs and on the data path: combine them with {@code |}
 * ({@code Access.LOCAL_WRITE | Access.REMOTE_WRITE}) wherever an access mask is taken (memory
 * registration, memory window binds, QP access flags).
 */
public final class Access {
    public static final int LOCAL_WRITE = 1;
    public static final int REMOTE_WRITE = 1 << 1;
    public static final int REMOTE_READ = 1 << 2;
    public static final int REMOTE_ATOMIC = 1 << 3;
    public static final int MW_BIND = 1 << 4;
    public static final int ZERO_BASED = 1 << 5;
    public static final int ON_DEMAND = 1 << 6;
    /** Every bit defined here. */
    public static final int ALL = (1 << 7) - 1;

    private static final String[] NAMES = {
        "LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC", "MW_BIND", "ZERO_BASED", "ON_DEMAND"};

    private Access() {}

    /** "LOCAL_WRITE|REMOTE_READ" style text of a mask; bits not defined here show as {@code "BIT<n>"}. */
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
