// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SendWorkRequestOperationsTest {
    @Test
    void eachOperationSetsItsOpcodeAndFields() {
        SendWorkRequest wr = new SendWorkRequest();
        assertEquals(WrOpcode.SEND, wr.opcode());
        assertSame(wr, wr.write(0x1000, 7));
        assertEquals(WrOpcode.RDMA_WRITE, wr.opcode());
        assertEquals(0x1000, wr.remoteAddr());
        assertEquals(7, wr.rkey());
        wr.writeWithImm(0x2000, 8, 0xCAFE);
        assertEquals(WrOpcode.RDMA_WRITE_WITH_IMM, wr.opcode());
        assertEquals(0x2000, wr.remoteAddr());
        assertEquals(0xCAFE, wr.immData());
        wr.read(0x3000, 9);
        assertEquals(WrOpcode.RDMA_READ, wr.opcode());
        assertEquals(9, wr.rkey());
        wr.send();
        assertEquals(WrOpcode.SEND, wr.opcode());
        wr.sendWithImm(42);
        assertEquals(WrOpcode.SEND_WITH_IMM, wr.opcode());
        assertEquals(42, wr.immData());
        wr.sendWithInvalidate(0x55);
        assertEquals(WrOpcode.SEND_WITH_INV, wr.opcode());
        assertEquals(0x55, wr.invalidateRkey());
        wr.fetchAdd(0x4000, 10, 3);
        assertEquals(WrOpcode.ATOMIC_FETCH_AND_ADD, wr.opcode());
        assertEquals(3, wr.compareAdd());
        wr.compareAndSwap(0x5000, 11, 1, 2);
        assertEquals(WrOpcode.ATOMIC_CMP_AND_SWP, wr.opcode());
        assertEquals(1, wr.compareAdd());
        assertEquals(2, wr.swap());
        wr.localInvalidate(0x66);
        assertEquals(WrOpcode.LOCAL_INV, wr.opcode());
    }

    @Test
    void aRemoteBufferForASendIsRefusedNotIgnored() {
        SendWorkRequest wr = new SendWorkRequest();
        assertThrows(IllegalStateException.class, () -> wr.rdma(0x1000, 7));
        wr.opcode(WrOpcode.SEND_WITH_IMM);
        assertThrows(IllegalStateException.class, () -> wr.rdma(0x1000, 7));
        assertEquals(0, wr.remoteAddr());
    }

    @Test
    void rdmaSetsTheRemoteBufferOfARemoteOpcode() {
        for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ,
                WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD}) {
            SendWorkRequest wr = new SendWorkRequest().opcode(op).rdma(0x10 + op.value(), op.value());
            assertEquals(op, wr.opcode());
            assertEquals(0x10 + op.value(), wr.remoteAddr());
            assertEquals(op.value(), wr.rkey());
        }
    }
}
