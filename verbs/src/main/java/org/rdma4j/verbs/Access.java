package org.rdma4j.verbs;

/**
 * Memory and QP access rights, mirroring {@code enum ibv_access_flags}. Use the {@code int} bit
 * values ({@link #bit()}, or the {@code *_BIT} constants) where libibverbs uses flags.
 */
public enum Access {
    LOCAL_WRITE(1),
    REMOTE_WRITE(1 << 1),
    REMOTE_READ(1 << 2),
    REMOTE_ATOMIC(1 << 3),
    MW_BIND(1 << 4),
    ZERO_BASED(1 << 5),
    ON_DEMAND(1 << 6);

    public static final int LOCAL_WRITE_BIT = 1;
    public static final int REMOTE_WRITE_BIT = 1 << 1;
    public static final int REMOTE_READ_BIT = 1 << 2;
    public static final int REMOTE_ATOMIC_BIT = 1 << 3;
    public static final int MW_BIND_BIT = 1 << 4;
    public static final int ZERO_BASED_BIT = 1 << 5;
    public static final int ON_DEMAND_BIT = 1 << 6;
    /** Every bit defined here. */
    public static final int ALL_BITS = (1 << 7) - 1;

    private final int bit;

    Access(int bit) {
        this.bit = bit;
    }

    public int bit() {
        return bit;
    }

    /** ORs the bits of {@code flags}. */
    public static int of(Access... flags) {
        int m = 0;
        for (Access a : flags) {
            m |= a.bit;
        }
        return m;
    }

    /** "LOCAL_WRITE|REMOTE_READ" style text of a bit mask. */
    public static String toString(int mask) {
        StringBuilder sb = new StringBuilder();
        for (Access a : values()) {
            if ((mask & a.bit) != 0) {
                if (!sb.isEmpty()) {
                    sb.append('|');
                }
                sb.append(a.name());
            }
        }
        return sb.isEmpty() ? "0" : sb.toString();
    }
}
