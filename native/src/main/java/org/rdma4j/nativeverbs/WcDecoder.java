// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * A native array of {@code struct ibv_wc} that {@code poll_cq} fills, and the decoding of its entries
 * into {@link WorkCompletion}s, without allocating: statuses and opcodes come from lookup tables.
 * Immediate data is in network byte order in {@code ibv_wc} and is read as such, so a value sent as
 * {@code x} arrives as {@code x}. Not thread safe: its CQ serializes polls.
 */
final class WcDecoder {
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final WcStatus[] STATUS = WcStatus.values();
    private static final WcOpcode[] OPCODE = new WcOpcode[256];

    static {
        for (WcOpcode o : WcOpcode.values()) {
            OPCODE[o.value()] = o;
        }
    }

    private final Arena arena = Arena.ofShared();
    /** Entries polled per call at most. */
    final int capacity;
    final MemorySegment wcs;
    /** {@code wcs.address()}, what a poll passes. */
    final long wcsAddress;

    WcDecoder(int capacity) {
        this.capacity = capacity;
        this.wcs = arena.allocate(capacity * WC_SIZE, 8);
        this.wcsAddress = wcs.address();
    }

    /** Decodes entry {@code i} of the last poll into {@code out}. */
    void decode(int i, WorkCompletion out) {
        long b = i * WC_SIZE;
        MemorySegment m = wcs;
        int status = m.get(INT, b + WC_STATUS);
        int opcode = m.get(INT, b + WC_OPCODE);
        int flags = m.get(INT, b + WC_WC_FLAGS);
        int imm = 0;
        int inv = 0;
        if ((flags & WcFlag.WITH_IMM) != 0) {
            imm = m.get(BE_INT, b + WC_IMM_DATA);
        } else if ((flags & WcFlag.WITH_INV) != 0) {
            inv = m.get(INT, b + WC_IMM_DATA);
        }
        WcOpcode op = opcode >= 0 && opcode < OPCODE.length ? OPCODE[opcode] : null;
        // a failed completion's opcode is undefined in verbs (rxe leaves what the WQE had); keep SEND then
        out.set(m.get(LONG, b + WC_WR_ID),
                status >= 0 && status < STATUS.length ? STATUS[status] : WcStatus.GENERAL_ERR,
                op == null ? WcOpcode.SEND : op,
                m.get(INT, b + WC_BYTE_LEN), m.get(INT, b + WC_QP_NUM), flags, imm, inv,
                m.get(INT, b + WC_SRC_QP), m.get(INT, b + WC_VENDOR_ERR));
        out.path(m.get(SHORT, b + WC_PKEY_INDEX) & 0xFFFF, m.get(SHORT, b + WC_SLID) & 0xFFFF,
                m.get(ValueLayout.JAVA_BYTE, b + WC_SL) & 0xFF, m.get(ValueLayout.JAVA_BYTE, b + WC_DLID_PATH_BITS) & 0xFF);
    }

    void close() {
        arena.close();
    }
}
