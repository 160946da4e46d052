// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Path MTU, mirroring {@code enum ibv_mtu} (value 1 = 256 bytes .. 5 = 4096 bytes). */
public enum Mtu {
    /** {@code IBV_MTU_256}. */
    MTU_256(1, 256),
    /** {@code IBV_MTU_512}. */
    MTU_512(2, 512),
    /** {@code IBV_MTU_1024}. */
    MTU_1024(3, 1024),
    /** {@code IBV_MTU_2048}. */
    MTU_2048(4, 2048),
    /** {@code IBV_MTU_4096}. */
    MTU_4096(5, 4096);

    private final int value;
    private final int bytes;

    Mtu(int value, int bytes) {
        this.value = value;
        this.bytes = bytes;
    }

    /** {@return the {@code IBV_MTU_*} value, 1 to 5} */
    public int value() {
        return value;
    }

    /** {@return the MTU in bytes of payload per packet, 256 to 4096} */
    public int bytes() {
        return bytes;
    }

    /**
     * The MTU of an {@code IBV_MTU_*} value.
     *
     * @param value 1 to 5
     * @return the MTU, or {@code null} if out of range
     */
    public static Mtu ofValue(int value) {
        return value >= 1 && value <= 5 ? values()[value - 1] : null;
    }

    /**
     * The MTU of exactly {@code bytes}.
     *
     * @param bytes 256, 512, 1024, 2048 or 4096
     * @return the MTU, or {@code null} for any other number
     */
    public static Mtu ofBytes(int bytes) {
        for (Mtu m : values()) {
            if (m.bytes == bytes) {
                return m;
            }
        }
        return null;
    }
}
