// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Path MTU, mirroring {@code enum ibv_mtu} (value 1 = 256 bytes .. 5 = 4096 bytes). */
public enum Mtu {
    MTU_256(1, 256), MTU_512(2, 512), MTU_1024(3, 1024), MTU_2048(4, 2048), MTU_4096(5, 4096);

    private final int value;
    private final int bytes;

    Mtu(int value, int bytes) {
        this.value = value;
        this.bytes = bytes;
    }

    /** The {@code IBV_MTU_*} value. */
    public int value() {
        return value;
    }

    public int bytes() {
        return bytes;
    }

    /** The MTU for an {@code IBV_MTU_*} value; {@code null} if out of range. */
    public static Mtu ofValue(int value) {
        return value >= 1 && value <= 5 ? values()[value - 1] : null;
    }

    /** The MTU of exactly {@code bytes} (256, 512, 1024, 2048, 4096); {@code null} otherwise. */
    public static Mtu ofBytes(int bytes) {
        for (Mtu m : values()) {
            if (m.bytes == bytes) {
                return m;
            }
        }
        return null;
    }
}
