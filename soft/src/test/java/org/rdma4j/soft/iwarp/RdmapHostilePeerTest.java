// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A peer that breaks the rules, one FPDU at a time: each violation gives the Terminate siw sends, places
 * nothing, and stops the receiver, so that a good FPDU after it is ignored.
 */
class RdmapHostilePeerTest {
    private static final int STAG = 0x0055_6601;
    private static final long BASE = 0x4000L;

    private final FakeDevice device = new FakeDevice();
    private final ReadLedger reads = new ReadLedger(1, 2);
    private final FakeDevice.Region window = device.register(STAG, 256, BASE, StagResolver.Use.REMOTE_WRITE);
    private final MemorySegment wire = MemorySegment.ofArray(new byte[4096]);
    private final MemorySegment payload = RdmapLoopbackTest.bytes(300, 3);
    private FpduEncoder encoder = new FpduEncoder(false);
    private RdmapReceiver rx = new RdmapReceiver(false, 65535, reads, device, device);

    private void crcOn() {
        encoder = new FpduEncoder(true);
        rx = new RdmapReceiver(true, 65535, reads, device, device);
    }

    private boolean feed(int length) {
        return rx.receive(wire, 0, length);
    }

    private int send(int msn, int mo, boolean last, int length) {
        return encoder.send(wire, 0, Rdmap.SEND, last, 0, msn, mo, payload, 0, length);
    }

    private int write(int stag, long to, boolean last, int length) {
        return encoder.tagged(wire, 0, Rdmap.RDMA_WRITE, last, stag, to, payload, 0, length);
    }

    /** Rewrites a 32-bit header field of the FPDU at 0 and frames it again (length, pad, CRC). */
    private int patch(int fieldOffset, int value, int headerLength, int payloadLength) {
        wire.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), fieldOffset, value);
        return encoder.frame(wire, 0, headerLength, payloadLength);
    }

    private TerminateCause stoppedWith(int layer, int etype, int ecode, int copiedBytes) {
        assertTrue(rx.stopped());
        TerminateCause t = rx.terminateToSend();
        assertNotNull(t);
        assertEquals(layer + "/" + etype + "/" + ecode, t.layer() + "/" + t.etype() + "/" + t.ecode(), t.words());
        assertEquals(copiedBytes, t.copiedHeader().byteSize());
        assertTrue(window.guardsIntact());
        assertTrue(window.window.elements(ValueLayout.JAVA_BYTE).allMatch(b -> b.get(ValueLayout.JAVA_BYTE, 0) == 0),
                "nothing was placed");
        // a good Send after the error is ignored
        device.post(99, 64);
        assertFalse(feed(send(rx.expectedMsn(0), 0, true, 8)));
        assertTrue(device.sends.isEmpty());
        return t;
    }

    @Test
    void sendWithTheWrongMsnIsAnUntaggedMsnRangeError() {
        device.post(1, 64);
        assertFalse(feed(send(2, 0, true, 8)));
        TerminateCause t = stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_UNTAGGED, Terminate.DDP_U_MSN_RANGE, 20);
        assertEquals(Terminate.FLAG_SEGMENT_LENGTH_VALID | Terminate.FLAG_DDP_HEADER, t.flags());
        assertEquals(2, Ddp.msn(t.copiedHeader(), 0), "the copy is the failed DDP header");
        assertEquals(8, Ddp.ulpduLength(t.copiedHeader(), 0), "its first field is the segment's payload length, as siw");
    }

    @Test
    void sendOnAnotherQueueIsAnInvalidQueueNumber() {
        device.post(1, 64);
        send(1, 0, true, 8);
        assertFalse(feed(patch(Ddp.QUEUE_NUMBER_OFFSET, 3, Ddp.UNTAGGED_HEADER_LENGTH, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_UNTAGGED, Terminate.DDP_U_INVALID_QN, 20);
    }

    @Test
    void sendWithNoReceivePostedIsNoBufferAvailable() {
        assertFalse(feed(send(1, 0, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_UNTAGGED, Terminate.DDP_U_NO_BUFFER, 20);
    }

    @Test
    void sendLongerThanItsReceiveIsNoBufferAvailable() {
        device.post(1, 4, 3);
        assertFalse(feed(send(1, 0, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_UNTAGGED, Terminate.DDP_U_NO_BUFFER, 20);
    }

    @Test
    void sendSegmentThatSkipsAheadIsAnInvalidMessageOffset() {
        device.post(1, 64);
        assertTrue(feed(send(1, 0, false, 8)));
        assertFalse(feed(send(1, 16, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_UNTAGGED, Terminate.DDP_U_INVALID_MO, 20);
    }

    @Test
    void writePastTheEndOfTheWindowTouchesNoByteOutsideIt() {
        assertFalse(feed(write(STAG, BASE + 200, true, 57)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_BASE_BOUNDS, 16);
    }

    @Test
    void writeBelowTheBaseOfTheWindowIsABoundsViolation() {
        assertFalse(feed(write(STAG, BASE - 1, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_BASE_BOUNDS, 16);
    }

    @Test
    void writeWhoseOffsetWrapsIsABoundsViolation() {
        assertFalse(feed(write(STAG, -4L, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_BASE_BOUNDS, 16);
    }

    @Test
    void writeToAnUnknownStagIsAnInvalidStag() {
        assertFalse(feed(write(STAG + 0x100, BASE, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_INVALID_STAG, 16);
    }

    @Test
    void writeWithoutRemoteWriteAccessIsAnInvalidStagAsSiwReportsIt() {
        device.register(STAG + 1, 64, 0, StagResolver.Use.REMOTE_READ);
        assertFalse(feed(write(STAG + 1, 0, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_INVALID_STAG, 16);
    }

    @Test
    void writeToAnotherProtectionDomainsStagIsNotAssociated() {
        window.foreignPd = true;
        assertFalse(feed(write(STAG, BASE, true, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_STAG_NOT_ASSOCIATED, 16);
    }

    @Test
    void writeSegmentThatChangesStagMidMessageIsAnInvalidStag() {
        device.register(STAG + 2, 64, 0, StagResolver.Use.REMOTE_WRITE);
        assertTrue(feed(write(STAG + 2, 0, false, 8)));
        assertFalse(feed(write(STAG, BASE + 8, true, 8)));
        assertEquals(Terminate.DDP_T_INVALID_STAG, rx.terminateToSend().ecode());
    }

    @Test
    void readRequestBeyondIrdIsACatastrophicStreamError() {
        assertTrue(feed(encoder.readRequest(wire, 0, 1, 1, 0, 8, STAG, BASE)));
        assertEquals(1, device.readRequests.size());
        assertFalse(feed(encoder.readRequest(wire, 0, 2, 1, 0, 8, STAG, BASE)));
        stoppedWith(Terminate.LAYER_RDMAP, Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_CATASTROPHIC_STREAM, 20);
        assertEquals(1, device.readRequests.size());
    }

    @Test
    void readRequestWithTheWrongMsnIsAnUntaggedMsnRangeError() {
        assertFalse(feed(encoder.readRequest(wire, 0, 5, 1, 0, 8, STAG, BASE)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_UNTAGGED, Terminate.DDP_U_MSN_RANGE, 20);
    }

    @Test
    void readResponseWithNoReadOutstandingIsALocalCatastrophicError() {
        assertFalse(feed(encoder.tagged(wire, 0, Rdmap.RDMA_READ_RESPONSE, true, STAG, BASE, payload, 0, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_CATASTROPHIC, 0, 16);
    }

    @Test
    void readResponseToAnotherSinkStagIsAnInvalidStag() {
        device.register(STAG + 4, 64, 0, StagResolver.Use.LOCAL_WRITE);
        assertTrue(reads.addOutbound(STAG + 4, 0, 8, 1));
        assertFalse(feed(encoder.tagged(wire, 0, Rdmap.RDMA_READ_RESPONSE, true, STAG, BASE, payload, 0, 8)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_INVALID_STAG, 16);
        assertTrue(device.readsDone.isEmpty());
    }

    @Test
    void readResponseLongerThanItsRequestIsABoundsViolation() {
        FakeDevice.Region sink = device.register(STAG + 5, 64, 0, StagResolver.Use.LOCAL_WRITE);
        assertTrue(reads.addOutbound(STAG + 5, 0, 8, 1));
        assertFalse(feed(encoder.tagged(wire, 0, Rdmap.RDMA_READ_RESPONSE, true, STAG + 5, 0, payload, 0, 12)));
        stoppedWith(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_BASE_BOUNDS, 16);
        assertTrue(sink.window.elements(ValueLayout.JAVA_BYTE).allMatch(b -> b.get(ValueLayout.JAVA_BYTE, 0) == 0));
        assertTrue(device.readsDone.isEmpty());
    }

    @Test
    void crcErrorWhenCrcIsOnIsAnMpaCrcErrorWithNoCopy() {
        crcOn();
        device.post(1, 64);
        int n = send(1, 0, true, 8);
        wire.set(ValueLayout.JAVA_BYTE, 21, (byte) (wire.get(ValueLayout.JAVA_BYTE, 21) ^ 1));
        assertFalse(feed(n));
        stoppedWith(Terminate.LAYER_LLP, Terminate.LLP_MPA, Terminate.MPA_CRC, 0);
    }

    @Test
    void aReadInsideAnUnfinishedSendIsAnUnexpectedOpcode() {
        device.post(1, 64);
        assertTrue(feed(send(1, 0, false, 8)));
        assertFalse(feed(encoder.readRequest(wire, 0, 1, 1, 0, 8, STAG, BASE)));
        stoppedWith(Terminate.LAYER_RDMAP, Terminate.RDMAP_REMOTE_OPERATION, Terminate.RDMAP_OPCODE, 0);
    }

    @Test
    void sendWithInvalidateOfAnotherDomainsStagIsARemoteProtectionError() {
        device.register(STAG + 3, 64, 0).foreignPd = true;
        device.post(1, 64);
        assertFalse(feed(encoder.send(wire, 0, Rdmap.SEND_INVALIDATE, true, STAG + 3, 1, 0, payload, 0, 8)));
        TerminateCause t = stoppedWith(Terminate.LAYER_RDMAP, Terminate.RDMAP_REMOTE_PROTECTION,
                Terminate.RDMAP_CANNOT_INVALIDATE, 20);
        assertEquals(Terminate.FLAG_SEGMENT_LENGTH_VALID | Terminate.FLAG_DDP_HEADER | Terminate.FLAG_RDMAP_HEADER,
                t.flags());
    }

    @Test
    void theTerminateGoesOutAsOneFpduOnQueueTwoWithItsCopy() {
        assertFalse(feed(write(STAG, BASE + 250, true, 8)));
        RdmapSender tx = new RdmapSender(false, 1460, new ReadLedger(0, 0));
        tx.terminate(rx.terminateToSend());
        MemorySegment out = MemorySegment.ofArray(new byte[256]);
        long n = tx.fill(out, 0, 256);
        assertTrue(tx.terminated());
        assertEquals(0, tx.fill(out, n, 256 - n), "nothing after the Terminate");
        List<String> got = new ArrayList<>();
        FpduReassembler r = new FpduReassembler(65535, false, f -> got.add(f.queueNumber() + " " + f.msn() + " "
                + Integer.toHexString(Terminate.controlWord(f.segment(), f.offset())) + " " + f.payloadLength() + " "
                + Integer.toHexString(Ddp.stag(f.segment(), f.payloadOffset()))));
        assertEquals(FpduError.NONE, r.receive(out, 0, n));
        assertEquals(List.of("2 1 1101c000 16 556601"), got, "DDP tagged base/bounds, M and D, the 16-byte DDP header");
    }

    @Test
    void aRefusedReadSourceSendsARemoteProtectionTerminateWithTheRequestRebuilt() {
        RdmapSender tx = new RdmapSender(false, 1460, new ReadLedger(1, 0));
        RdmapReceiver.ReadRequest rr = new RdmapReceiver.ReadRequest(1, 0x77, 0x10, 64, STAG, BASE);
        assertEquals(StagError.ACCESS, tx.answer(rr, device, new StagResolver.Window()));
        MemorySegment out = MemorySegment.ofArray(new byte[256]);
        long n = tx.fill(out, 0, 256);
        List<String> got = new ArrayList<>();
        FpduReassembler r = new FpduReassembler(65535, false, f -> got.add(Integer.toHexString(
                Terminate.controlWord(f.segment(), f.offset())) + " " + f.payloadLength() + " "
                + Rdmap.readSize(f.segment(), f.payloadOffset())));
        assertEquals(FpduError.NONE, r.receive(out, 0, n));
        assertEquals(List.of("102e000 48 64"), got, "RDMAP remote protection, access rights, M D R, 48 bytes");
    }
}
