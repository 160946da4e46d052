// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WrOpcode;

class SendWrRulesTest {
    private static SendWorkRequest wr(WrOpcode op, int... lengths) {
        SendWorkRequest w = new SendWorkRequest().opcode(op);
        for (int len : lengths) {
            w.sge(0x1000, len, 7);
        }
        return w;
    }

    private static String check(QpType type, SendWorkRequest w) {
        return SendWrRules.check(type, w, 4, 64);
    }

    @Test
    void udCarriesOnlySendsAndNeedsAnAddressHandle() {
        assertEquals("RDMA_WRITE is not supported on a UD QP", check(QpType.UD, wr(WrOpcode.RDMA_WRITE, 8)));
        assertEquals("UD send without an address handle", check(QpType.UD, wr(WrOpcode.SEND, 8)));
    }

    @Test
    void ucCarriesNoReadAtomicOrSendWithInvalidate() {
        for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.SEND_WITH_INV}) {
            assertEquals(op + " is not supported on a UC QP", check(QpType.UC, wr(op, 8)));
        }
        assertNull(check(QpType.UC, wr(WrOpcode.RDMA_WRITE_WITH_IMM, 8)));
        assertNull(check(QpType.RC, wr(WrOpcode.RDMA_READ, 8)));
    }

    @Test
    void sgeAndInlineLimitsAreTheQps() {
        assertEquals("work request has 5 SGEs, max_send_sge is 4", check(QpType.RC, wr(WrOpcode.SEND, 1, 1, 1, 1, 1)));
        assertEquals("inline data of 65 bytes exceeds max_inline_data 64",
                check(QpType.RC, wr(WrOpcode.SEND, 65).flags(SendFlag.INLINE)));
        assertNull(check(QpType.RC, wr(WrOpcode.SEND, 64).flags(SendFlag.INLINE)));
        assertEquals("inline data needs a SEND or RDMA WRITE, not RDMA_READ",
                check(QpType.RC, wr(WrOpcode.RDMA_READ, 8).flags(SendFlag.INLINE)));
    }

    @Test
    void messagesAboveTwoGibibytesMinusOneAreRefused() {
        SendWorkRequest w = wr(WrOpcode.SEND, Integer.MAX_VALUE, 1);
        assertEquals("message of 2147483648 bytes exceeds max_msg_sz", check(QpType.RC, w));
    }

    @Test
    void atomicsNeedAnAlignedAddressAndEightBytes() {
        assertEquals("atomic remote address 0x1004 is not 8-byte aligned",
                check(QpType.RC, wr(WrOpcode.ATOMIC_CMP_AND_SWP, 8).rdma(0x1004, 1)));
        assertEquals("atomic needs one 8-byte local buffer, got 4 bytes",
                check(QpType.RC, wr(WrOpcode.ATOMIC_FETCH_AND_ADD, 4).rdma(0x1000, 1)));
        assertNull(check(QpType.RC, wr(WrOpcode.ATOMIC_FETCH_AND_ADD, 8).rdma(0x1000, 1)));
    }

    @Test
    void aRequestWithoutOpcodeOrBindWithoutWindowIsRefused() {
        assertEquals("no opcode", check(QpType.RC, new SendWorkRequest().opcode(null)));
        assertEquals("BIND_MW without a window or a region", check(QpType.RC, wr(WrOpcode.BIND_MW)));
    }
}
