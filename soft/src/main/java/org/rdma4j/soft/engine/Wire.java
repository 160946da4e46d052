package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Stateless big-endian field access for the few header fields the dispatch path reads before it
 * knows which flyweight applies. Thread safe.
 */
final class Wire {
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong NATIVE_LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private Wire() {}

    static int opcode(MemorySegment s) {
        return s.get(ValueLayout.JAVA_BYTE, 0) & 0xFF;
    }

    static int destQpn(MemorySegment s) {
        return s.get(INT, 4) & 0xFFFFFF;
    }

    static int psn(MemorySegment s) {
        return s.get(INT, 8) & 0xFFFFFF;
    }
}
