// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class OpcodeTest {

    /** Header length of every valid opcode, written out independently of the table under test. */
    private static final Map<Integer, Integer> HEADER_LENGTHS = new TreeMap<>(Map.ofEntries(
        Map.entry(0x00, 12), Map.entry(0x01, 12), Map.entry(0x02, 12), Map.entry(0x03, 16),
        Map.entry(0x04, 12), Map.entry(0x05, 16), Map.entry(0x06, 28), Map.entry(0x07, 12),
        Map.entry(0x08, 12), Map.entry(0x09, 16), Map.entry(0x0A, 28), Map.entry(0x0B, 32),
        Map.entry(0x0C, 28), Map.entry(0x0D, 16), Map.entry(0x0E, 12), Map.entry(0x0F, 16),
        Map.entry(0x10, 16), Map.entry(0x11, 16), Map.entry(0x12, 24), Map.entry(0x13, 40),
        Map.entry(0x14, 40), Map.entry(0x16, 16), Map.entry(0x17, 16),
        Map.entry(0x20, 12), Map.entry(0x21, 12), Map.entry(0x22, 12), Map.entry(0x23, 16),
        Map.entry(0x24, 12), Map.entry(0x25, 16), Map.entry(0x26, 28), Map.entry(0x27, 12),
        Map.entry(0x28, 12), Map.entry(0x29, 16), Map.entry(0x2A, 28), Map.entry(0x2B, 32),
        Map.entry(0x64, 20), Map.entry(0x65, 24)));

    @Test
    void headerLengthOfEveryValidOpcode() {
        for (Map.Entry<Integer, Integer> e : HEADER_LENGTHS.entrySet()) {
            assertEquals(e.getValue(), Opcode.headerLength(e.getKey()), Opcode.name(e.getKey()));
        }
        assertEquals(12, Opcode.headerLength(Opcode.RC_SEND_ONLY));
        assertEquals(28, Opcode.headerLength(Opcode.RC_RDMA_WRITE_ONLY));
        assertEquals(32, Opcode.headerLength(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals(40, Opcode.headerLength(Opcode.RC_COMPARE_SWAP));
        assertEquals(24, Opcode.headerLength(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertEquals(12, Opcode.headerLength(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE));
        assertEquals(24, Opcode.headerLength(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE));
        assertEquals(16, Opcode.headerLength(Opcode.RC_SEND_ONLY_WITH_INVALIDATE));
    }

    @Test
    void exactlyTheIbtaOpcodesAreValid() {
        for (int op = 0; op < 256; op++) {
            boolean expected = HEADER_LENGTHS.containsKey(op);
            assertEquals(expected, Opcode.isValid(op), String.format("0x%02x", op));
            if (!expected) {
                assertEquals(0, Opcode.flags(op));
                assertEquals(0, Opcode.headerLength(op));
                assertEquals(Opcode.TRANSPORT_NONE, Opcode.transport(op));
                assertEquals(String.format("INVALID_0x%02X", op), Opcode.name(op));
                assertEquals(0, Opcode.position(op));
                for (int header = Opcode.HEADER_DETH; header <= Opcode.HEADER_IETH; header++) {
                    assertEquals(-1, Opcode.offsetOf(op, header));
                }
            }
        }
        for (int op : new int[] {0x15, 0x18, 0x19, 0x1F, 0x2C, 0x2F, 0x40, 0x60, 0x63, 0x66, 0x80, 0xFF}) {
            assertFalse(Opcode.isValid(op), Opcode.name(op));
        }
    }

    @Test
    void lookupsUseOnlyTheLowEightBitsAndNeverThrow() {
        assertEquals(12, Opcode.headerLength(0x100 | Opcode.RC_SEND_ONLY));
        assertEquals("RC_ACKNOWLEDGE", Opcode.name(-256 + Opcode.RC_ACKNOWLEDGE));
        assertTrue(Opcode.isValid((byte) Opcode.UD_SEND_ONLY));
        assertFalse(Opcode.isValid(-1));
    }

    @Test
    void namesMatchTheConstants() throws IllegalAccessException {
        int constants = 0;
        for (Field field : Opcode.class.getFields()) {
            String name = field.getName();
            if (Modifier.isStatic(field.getModifiers()) && name.matches("(RC|UC|UD)_.*")) {
                int op = field.getInt(null);
                assertEquals(name, Opcode.name(op));
                assertTrue(Opcode.isValid(op), name);
                constants++;
            }
        }
        assertEquals(HEADER_LENGTHS.size(), constants);
    }

    @Test
    void extensionHeadersFollowTheBthInIbtaOrder() {
        assertEquals(12, Opcode.offsetOf(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.HEADER_RETH));
        assertEquals(28, Opcode.offsetOf(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.HEADER_IMM_DT));
        assertEquals(12, Opcode.offsetOf(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE, Opcode.HEADER_DETH));
        assertEquals(20, Opcode.offsetOf(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE, Opcode.HEADER_IMM_DT));
        assertEquals(12, Opcode.offsetOf(Opcode.RC_ATOMIC_ACKNOWLEDGE, Opcode.HEADER_AETH));
        assertEquals(16, Opcode.offsetOf(Opcode.RC_ATOMIC_ACKNOWLEDGE, Opcode.HEADER_ATOMIC_ACK_ETH));
        assertEquals(12, Opcode.offsetOf(Opcode.RC_COMPARE_SWAP, Opcode.HEADER_ATOMIC_ETH));
        assertEquals(12, Opcode.offsetOf(Opcode.RC_SEND_ONLY_WITH_INVALIDATE, Opcode.HEADER_IETH));
        assertEquals(12, Opcode.offsetOf(Opcode.RC_RDMA_READ_RESPONSE_FIRST, Opcode.HEADER_AETH));
        assertEquals(12, Opcode.offsetOf(Opcode.RC_RDMA_READ_REQUEST, Opcode.HEADER_RETH));
        assertEquals(-1, Opcode.offsetOf(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, Opcode.HEADER_AETH));
        assertEquals(-1, Opcode.offsetOf(Opcode.RC_RDMA_WRITE_MIDDLE, Opcode.HEADER_RETH));
    }

    @Test
    void offsetsAndHeaderLengthAgreeForEveryOpcode() {
        int[] lengths = {Deth.LENGTH, Reth.LENGTH, AtomicEth.LENGTH, Aeth.LENGTH, AtomicAckEth.LENGTH, ImmDt.LENGTH, Ieth.LENGTH};
        for (int op : HEADER_LENGTHS.keySet()) {
            int end = Bth.LENGTH;
            for (int header = 0; header < lengths.length; header++) {
                int offset = Opcode.offsetOf(op, header);
                assertEquals(offset >= 0, (Opcode.flags(op) & 1 << header) != 0, Opcode.name(op));
                if (offset >= 0) {
                    assertEquals(end, offset, Opcode.name(op) + " header " + header);
                    end += lengths[header];
                }
            }
            assertEquals(end, Opcode.headerLength(op), Opcode.name(op));
        }
    }

    @Test
    void everyValidOpcodeHasOnePositionOneDirectionAndATransport() {
        for (int op : HEADER_LENGTHS.keySet()) {
            assertEquals(1, Integer.bitCount(Opcode.position(op)), Opcode.name(op));
            assertTrue(Opcode.isRequest(op) ^ Opcode.isResponse(op), Opcode.name(op));
            int expectedTransport = op < 0x20 ? Opcode.TRANSPORT_RC : op < 0x40 ? Opcode.TRANSPORT_UC : Opcode.TRANSPORT_UD;
            assertEquals(expectedTransport, Opcode.transport(op));
            assertTrue(Opcode.name(op).startsWith(new String[] {"RC_", "UC_", "UD_"}[expectedTransport]));
            assertEquals(Opcode.isFirst(op) || Opcode.isOnly(op), Opcode.isStart(op));
            assertEquals(Opcode.isLast(op) || Opcode.isOnly(op), Opcode.isEnd(op));
            assertEquals(Opcode.name(op).contains("IMMEDIATE"), Opcode.hasImmDt(op), Opcode.name(op));
            assertEquals(Opcode.name(op).contains("INVALIDATE"), Opcode.hasIeth(op), Opcode.name(op));
        }
    }

    @Test
    void consumesRecvForSendsAndWritesWithImmediateOnly() {
        for (int op : HEADER_LENGTHS.keySet()) {
            boolean expected = Opcode.isSend(op)
                    || Opcode.isWrite(op) && Opcode.hasImmDt(op) && (Opcode.isLast(op) || Opcode.isOnly(op));
            assertEquals(expected, Opcode.consumesRecv(op), Opcode.name(op));
        }
        assertTrue(Opcode.consumesRecv(Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE));
        assertFalse(Opcode.consumesRecv(Opcode.RC_RDMA_WRITE_ONLY));
        assertFalse(Opcode.consumesRecv(Opcode.RC_RDMA_READ_REQUEST));
    }

    @Test
    void requiresAckForExactlyTheRcRequests() {
        for (int op : HEADER_LENGTHS.keySet()) {
            assertEquals(Opcode.transport(op) == Opcode.TRANSPORT_RC && Opcode.isRequest(op), Opcode.requiresAck(op),
                    Opcode.name(op));
        }
        assertFalse(Opcode.requiresAck(Opcode.UC_SEND_ONLY));
        assertFalse(Opcode.requiresAck(Opcode.RC_ACKNOWLEDGE));
    }

    @Test
    void payloadAndOperationFlagsFollowTheSpecification() {
        assertFalse(Opcode.hasPayload(Opcode.RC_RDMA_READ_REQUEST));
        assertFalse(Opcode.hasPayload(Opcode.RC_ACKNOWLEDGE));
        assertFalse(Opcode.hasPayload(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertFalse(Opcode.hasPayload(Opcode.RC_FETCH_ADD));
        assertTrue(Opcode.hasPayload(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE));
        assertTrue(Opcode.hasPayload(Opcode.UD_SEND_ONLY));
        assertTrue(Opcode.isRead(Opcode.RC_RDMA_READ_REQUEST) && Opcode.isRequest(Opcode.RC_RDMA_READ_REQUEST));
        assertTrue(Opcode.isRead(Opcode.RC_RDMA_READ_RESPONSE_ONLY) && Opcode.isResponse(Opcode.RC_RDMA_READ_RESPONSE_ONLY));
        assertTrue(Opcode.isAtomic(Opcode.RC_COMPARE_SWAP) && Opcode.isAtomic(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertTrue(Opcode.hasReth(Opcode.RC_RDMA_WRITE_FIRST) && !Opcode.hasReth(Opcode.RC_RDMA_WRITE_LAST));
        assertTrue(Opcode.hasAeth(Opcode.RC_RDMA_READ_RESPONSE_LAST) && !Opcode.hasAeth(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE));
        assertTrue(Opcode.hasAtomicEth(Opcode.RC_FETCH_ADD));
        assertTrue(Opcode.hasAtomicAckEth(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertTrue(Opcode.hasDeth(Opcode.UD_SEND_ONLY));
        assertTrue(Opcode.isMiddle(Opcode.UC_SEND_MIDDLE));
        assertTrue(Opcode.isOnly(Opcode.RC_ACKNOWLEDGE));
    }

    @Test
    void helpersPickTheOpcodeAndRejectImpossibleCombinations() {
        assertEquals(Opcode.RC_SEND_FIRST, Opcode.sendOpcode(Opcode.TRANSPORT_RC, Opcode.FIRST, false, false));
        assertEquals(Opcode.RC_SEND_LAST_WITH_IMMEDIATE, Opcode.sendOpcode(Opcode.TRANSPORT_RC, Opcode.LAST, true, false));
        assertEquals(Opcode.RC_SEND_ONLY_WITH_INVALIDATE, Opcode.sendOpcode(Opcode.TRANSPORT_RC, Opcode.ONLY, false, true));
        assertEquals(Opcode.UC_SEND_ONLY_WITH_IMMEDIATE, Opcode.sendOpcode(Opcode.TRANSPORT_UC, Opcode.ONLY, true, false));
        assertEquals(Opcode.UD_SEND_ONLY, Opcode.sendOpcode(Opcode.TRANSPORT_UD, Opcode.ONLY, false, false));
        assertEquals(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE, Opcode.sendOpcode(Opcode.TRANSPORT_UD, Opcode.ONLY, true, false));
        assertEquals(-1, Opcode.sendOpcode(Opcode.TRANSPORT_UD, Opcode.FIRST, false, false));
        assertEquals(-1, Opcode.sendOpcode(Opcode.TRANSPORT_UC, Opcode.ONLY, false, true));
        assertEquals(-1, Opcode.sendOpcode(Opcode.TRANSPORT_RC, Opcode.ONLY, true, true));
        assertEquals(-1, Opcode.sendOpcode(Opcode.TRANSPORT_RC, Opcode.FIRST, true, false));
        assertEquals(-1, Opcode.sendOpcode(Opcode.TRANSPORT_RC, Opcode.MIDDLE, false, true));
        assertEquals(-1, Opcode.sendOpcode(7, Opcode.ONLY, false, false));
        assertEquals(-1, Opcode.sendOpcode(Opcode.TRANSPORT_RC, Opcode.FIRST | Opcode.LAST, false, false));

        assertEquals(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.writeOpcode(Opcode.TRANSPORT_RC, Opcode.ONLY, true));
        assertEquals(Opcode.UC_RDMA_WRITE_MIDDLE, Opcode.writeOpcode(Opcode.TRANSPORT_UC, Opcode.MIDDLE, false));
        assertEquals(-1, Opcode.writeOpcode(Opcode.TRANSPORT_UD, Opcode.ONLY, false));
        assertEquals(-1, Opcode.writeOpcode(Opcode.TRANSPORT_RC, Opcode.FIRST, true));

        assertEquals(Opcode.RC_RDMA_READ_RESPONSE_FIRST, Opcode.readResponseOpcode(Opcode.FIRST));
        assertEquals(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, Opcode.readResponseOpcode(Opcode.MIDDLE));
        assertEquals(Opcode.RC_RDMA_READ_RESPONSE_LAST, Opcode.readResponseOpcode(Opcode.LAST));
        assertEquals(Opcode.RC_RDMA_READ_RESPONSE_ONLY, Opcode.readResponseOpcode(Opcode.ONLY));
        assertEquals(-1, Opcode.readResponseOpcode(0));
    }

    @Test
    void helpersRecoverEverySendAndWriteOpcodeFromItsOwnFlags() {
        int recovered = 0;
        for (int op : HEADER_LENGTHS.keySet()) {
            if (Opcode.isSend(op)) {
                assertEquals(op, Opcode.sendOpcode(Opcode.transport(op), Opcode.position(op), Opcode.hasImmDt(op),
                        Opcode.hasIeth(op)), Opcode.name(op));
                recovered++;
            } else if (Opcode.isWrite(op)) {
                assertEquals(op, Opcode.writeOpcode(Opcode.transport(op), Opcode.position(op), Opcode.hasImmDt(op)),
                        Opcode.name(op));
                recovered++;
            }
        }
        assertEquals(8 + 6 + 6 + 6 + 2, recovered);
    }
}
