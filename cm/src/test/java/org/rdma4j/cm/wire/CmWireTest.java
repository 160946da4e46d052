// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The CM flyweights against MADs built byte by byte from the layout of IBTA vol. 1 ch. 12 / cm_msgs.h. */
class CmWireTest {
    private static MemorySegment mad(byte[] b) {
        MemorySegment s = Arena.ofAuto().allocate(256);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        return s;
    }

    private static byte[] bytes(MemorySegment s) {
        return s.asSlice(0, 256).toArray(ValueLayout.JAVA_BYTE);
    }

    private static byte[] header(int attr) {
        byte[] b = new byte[256];
        b[0] = 1;
        b[1] = 0x07;
        b[2] = 2;
        b[3] = 0x03;
        for (int i = 0; i < 8; i++) {
            b[8 + i] = (byte) (0x11 * (i + 1)); // TID 0x1122334455667788
        }
        b[16] = (byte) (attr >>> 8);
        b[17] = (byte) attr;
        return b;
    }

    @Test
    void madHeaderFieldsSitAtTheirOffsets() {
        MemorySegment s = mad(header(MadHeader.ATTR_REP));
        assertEquals(1, MadHeader.baseVersion(s));
        assertEquals(7, MadHeader.mgmtClass(s));
        assertEquals(2, MadHeader.classVersion(s));
        assertEquals(3, MadHeader.method(s));
        assertEquals(0x1122334455667788L, MadHeader.transactionId(s));
        assertEquals(0x13, MadHeader.attributeId(s));
        MemorySegment w = Arena.ofAuto().allocate(256);
        w.fill((byte) 0x5A);
        MadHeader.writeCm(w, 3, 0x13, 0x1122334455667788L);
        assertArrayEquals(java.util.Arrays.copyOf(header(0x13), 24), java.util.Arrays.copyOf(bytes(w), 24));
    }

    @Test
    void reqFieldsReadFromHandBuiltBytes() {
        byte[] b = header(MadHeader.ATTR_REQ);
        b[24] = 0x0A; b[25] = 0x0B; b[26] = 0x0C; b[27] = 0x0D;           // local comm id
        b[32] = 0; b[33] = 0; b[34] = 0; b[35] = 0; b[36] = 0x01; b[37] = 0x06; b[38] = 0x1C; b[39] = 0x06; // sid
        b[40] = (byte) 0xCA; b[47] = (byte) 0xFE;                          // CA GUID
        b[52] = (byte) 0x80; b[53] = 0x01; b[54] = 0; b[55] = 0;           // Q_Key
        b[56] = 0x12; b[57] = 0x34; b[58] = 0x56; b[59] = 4;               // QPN, responder resources
        b[63] = 3;                                                         // initiator depth
        b[67] = (byte) (20 << 3 | 1 << 1 | 1);                             // remote timeout, UC, flow ctrl
        b[68] = 0x65; b[69] = 0x43; b[70] = 0x21; b[71] = (byte) (18 << 3 | 6); // PSN, local timeout, retry
        b[72] = (byte) 0xFF; b[73] = (byte) 0xFF;                          // P_Key
        b[74] = (byte) (3 << 4 | 7);                                       // MTU 1024, RNR retry 7
        b[75] = (byte) (15 << 4 | 1 << 3);                                 // max CM retries, SRQ
        b[76] = 0x00; b[77] = 0x07; b[78] = 0x00; b[79] = 0x09;            // LIDs
        for (int i = 0; i < 16; i++) {
            b[80 + i] = (byte) i;
            b[96 + i] = (byte) (0xF0 | i);
        }
        b[112] = 0x12; b[113] = 0x34; b[114] = 0x50; b[115] = 0x3F;        // flow label 0x12345, rate 63
        b[116] = (byte) 0xB8; b[117] = 64; b[118] = (byte) (5 << 4 | 1 << 3); b[119] = (byte) (14 << 3);
        b[164] = 0x42; b[255] = 0x43;
        CmReq r = new CmReq().wrap(mad(b));
        assertEquals(0x0A0B0C0D, r.localCommId());
        assertEquals(0x01061C06L, r.serviceId());
        assertEquals(0xCA000000000000FEL, r.localCaGuid());
        assertEquals(0x80010000, r.localQkey());
        assertEquals(0x123456, r.localQpn());
        assertEquals(4, r.responderResources());
        assertEquals(3, r.initiatorDepth());
        assertEquals(20, r.remoteCmResponseTimeout());
        assertEquals(CmReq.TRANSPORT_UC, r.transportServiceType());
        assertTrue(r.flowControl());
        assertEquals(0x654321, r.startingPsn());
        assertEquals(18, r.localCmResponseTimeout());
        assertEquals(6, r.retryCount());
        assertEquals(0xFFFF, r.pkey());
        assertEquals(3, r.pathMtu());
        assertEquals(7, r.rnrRetryCount());
        assertFalse(r.rdcExists());
        assertEquals(15, r.maxCmRetries());
        assertTrue(r.srq());
        assertEquals(7, r.primaryLocalLid());
        assertEquals(9, r.primaryRemoteLid());
        byte[] g = new byte[16];
        r.primaryLocalGid(g);
        assertEquals(15, g[15]);
        r.primaryRemoteGid(g);
        assertEquals((byte) 0xF3, g[3]);
        assertEquals(0x12345, r.primaryFlowLabel());
        assertEquals(63, r.primaryPacketRate());
        assertEquals(0xB8, r.primaryTrafficClass());
        assertEquals(64, r.primaryHopLimit());
        assertEquals(5, r.primarySl());
        assertTrue(r.primarySubnetLocal());
        assertEquals(14, r.primaryLocalAckTimeout());
        assertEquals(92, r.privateDataLength());
        byte[] pd = r.privateData();
        assertEquals(0x42, pd[0]);
        assertEquals(0x43, pd[91]);
        assertEquals(MadCheck.BAD_CMA_HEADER, MadCheck.check(r.segment(), 256), "0x42 is no rdma_cm header");
    }

    @Test
    void reqWrittenFieldByFieldEqualsTheHandBuiltBytes() {
        MemorySegment s = Arena.ofAuto().allocate(256);
        s.fill((byte) 0x77); // clearAndInit must zero everything the setters do not write
        CmReq r = new CmReq().wrap(s);
        r.clearAndInit(0x1122334455667788L);
        byte[] lg = new byte[16];
        byte[] rg = new byte[16];
        for (int i = 0; i < 16; i++) {
            lg[i] = (byte) i;
            rg[i] = (byte) (0xF0 | i);
        }
        r.localCommId(0x0A0B0C0D).serviceId(0x01061C06L).localCaGuid(0xCA000000000000FEL).localQkey(0x80010000)
                .localQpn(0x123456).responderResources(4).initiatorDepth(3).remoteCmResponseTimeout(20)
                .transportServiceType(1).flowControl(true).startingPsn(0x654321).localCmResponseTimeout(18)
                .retryCount(6).pkey(0xFFFF).pathMtu(3).rnrRetryCount(7).maxCmRetries(15).srq(true)
                .primaryLocalLid(7).primaryRemoteLid(9).primaryLocalGidSet(lg).primaryRemoteGidSet(rg)
                .primaryFlowLabel(0x12345).primaryPacketRate(63).primaryTrafficClass(0xB8).primaryHopLimit(64)
                .primarySl(5).primarySubnetLocal(true).primaryLocalAckTimeout(14);
        byte[] pd = new byte[92];
        pd[0] = 0x42;
        pd[91] = 0x43;
        r.setPrivateData(pd, 0, 92);
        byte[] b = bytes(s);
        assertEquals(0x12, b[56]);
        assertEquals(0x56, b[58]);
        assertEquals(4, b[59]);
        assertEquals((byte) (20 << 3 | 1 << 1 | 1), b[67]);
        assertEquals(0x21, b[70]);
        assertEquals((byte) (18 << 3 | 6), b[71]);
        assertEquals((byte) (3 << 4 | 7), b[74]);
        assertEquals((byte) (15 << 4 | 1 << 3), b[75]);
        assertEquals(0x50, b[114]);
        assertEquals(0x3F, b[115]);
        assertEquals((byte) (5 << 4 | 1 << 3), b[118]);
        assertEquals((byte) (14 << 3), b[119]);
        assertEquals(0, b[28]);
        assertEquals(0, b[120]);
        assertEquals(0x42, b[164]);
        // setting a field again leaves its neighbours in the same byte/word alone
        r.retryCount(1);
        assertEquals(18, r.localCmResponseTimeout());
        assertEquals(0x654321, r.startingPsn());
        r.startingPsn(0xABCDEF);
        assertEquals(1, r.retryCount());
        assertEquals(18, r.localCmResponseTimeout());
        r.localQpn(0xFFFFFFFF);
        assertEquals(0xFFFFFF, r.localQpn());
        assertEquals(4, r.responderResources());
    }

    @Test
    void repFieldsSitAtTheirOffsets() {
        byte[] b = header(MadHeader.ATTR_REP);
        b[27] = 1; b[31] = 2;
        b[32] = 0x11; b[35] = 0x22;                        // Q_Key
        b[36] = 0x0A; b[37] = 0x0B; b[38] = 0x0C;          // QPN
        b[44] = 0x01; b[45] = 0x02; b[46] = 0x03;          // PSN
        b[48] = 5; b[49] = 6;
        b[50] = (byte) (17 << 3 | 2 << 1 | 1);
        b[51] = (byte) (7 << 5 | 1 << 4);
        b[52] = 0x33; b[59] = 0x44;
        b[60] = 0x55; b[255] = 0x66;
        CmRep r = new CmRep().wrap(mad(b));
        assertEquals(1, r.localCommId());
        assertEquals(2, r.remoteCommId());
        assertEquals(0x11000022, r.localQkey());
        assertEquals(0x0A0B0C, r.localQpn());
        assertEquals(0x010203, r.startingPsn());
        assertEquals(5, r.responderResources());
        assertEquals(6, r.initiatorDepth());
        assertEquals(17, r.targetAckDelay());
        assertEquals(2, r.failoverAccepted());
        assertTrue(r.flowControl());
        assertEquals(7, r.rnrRetryCount());
        assertTrue(r.srq());
        assertEquals(0x3300000000000044L, r.localCaGuid());
        assertEquals(196, r.privateDataLength());
        assertEquals(0x66, r.privateData()[195]);

        CmRep w = new CmRep().wrap(Arena.ofAuto().allocate(256));
        w.clearAndInit(0x1122334455667788L);
        w.localCommId(1).remoteCommId(2).localQkey(0x11000022).localQpn(0x0A0B0C).startingPsn(0x010203)
                .responderResources(5).initiatorDepth(6).targetAckDelay(17).failoverAccepted(2).flowControl(true)
                .rnrRetryCount(7).srq(true).localCaGuid(0x3300000000000044L);
        byte[] pd = new byte[196];
        pd[0] = 0x55;
        pd[195] = 0x66;
        w.setPrivateData(pd, 0, 196);
        assertArrayEquals(b, bytes(w.segment()));
    }

    @Test
    void rejReasonNumbersAreThoseOfIbtaTable112() {
        // IBTA vol. 1 table 112 (the kernel's enum ib_cm_rej_reason): a Linux peer reads these numbers
        assertEquals(1, CmRej.REASON_NO_QP);
        assertEquals(4, CmRej.REASON_TIMEOUT);
        assertEquals(8, CmRej.REASON_INVALID_SERVICE_ID);
        assertEquals(10, CmRej.REASON_STALE_CONN);
        assertEquals(28, CmRej.REASON_CONSUMER_DEFINED);
        assertEquals(31, CmRej.REASON_INVALID_CLASS_VERSION);
        byte[] b = header(MadHeader.ATTR_REJ);
        b[35] = 4; // reason, bytes 34-35 of the REJ
        assertEquals(CmRej.REASON_TIMEOUT, new CmRej().wrap(mad(b)).reason());
    }

    @Test
    void mraRejRtuDreqDrepRoundTripThroughHandBuiltBytes() {
        byte[] b = header(MadHeader.ATTR_REJ);
        b[27] = 9; b[31] = 10;
        b[32] = (byte) (1 << 6);
        b[33] = (byte) (8 << 1);
        b[34] = 0; b[35] = 28;
        b[36] = (byte) 0xAA; b[43] = (byte) 0xBB;
        b[108] = 0x01; b[255] = 0x02;
        CmRej rej = new CmRej().wrap(mad(b));
        assertEquals(9, rej.localCommId());
        assertEquals(10, rej.remoteCommId());
        assertEquals(CmRej.MSG_REP, rej.messageRejected());
        assertEquals(8, rej.rejectInfoLength());
        assertEquals(CmRej.REASON_CONSUMER_DEFINED, rej.reason());
        byte[] ari = new byte[72];
        rej.ari(ari);
        assertEquals((byte) 0xBB, ari[7]);
        assertEquals(148, rej.privateDataLength());
        CmRej w = new CmRej().wrap(Arena.ofAuto().allocate(256));
        w.clearAndInit(0x1122334455667788L);
        byte[] a = new byte[8];
        a[0] = (byte) 0xAA;
        a[7] = (byte) 0xBB;
        byte[] pd = new byte[148];
        pd[0] = 1;
        pd[147] = 2;
        w.localCommId(9).remoteCommId(10).messageRejected(1).reason(28).ari(a, 8).setPrivateData(pd, 0, 148);
        assertArrayEquals(b, bytes(w.segment()));

        byte[] m = header(MadHeader.ATTR_MRA);
        m[27] = 3; m[31] = 4;
        m[32] = (byte) (1 << 6);
        m[33] = (byte) (21 << 3);
        m[34] = 0x7E;
        CmMra mra = new CmMra().wrap(mad(m));
        assertEquals(3, mra.localCommId());
        assertEquals(4, mra.remoteCommId());
        assertEquals(CmMra.MSG_REP, mra.messageMraed());
        assertEquals(21, mra.serviceTimeout());
        assertEquals(222, mra.privateDataLength());
        assertEquals(0x7E, mra.privateData()[0]);

        byte[] d = header(MadHeader.ATTR_DREQ);
        d[24] = 1; d[28] = 2; d[32] = 0x0F; d[33] = 0x0E; d[34] = 0x0D; d[35] = 0x5C; d[36] = 0x33;
        CmDreq dreq = new CmDreq().wrap(mad(d));
        assertEquals(0x01000000, dreq.localCommId());
        assertEquals(0x02000000, dreq.remoteCommId());
        assertEquals(0x0F0E0D, dreq.remoteQpn());
        dreq.remoteQpn(0x010203);
        assertEquals(0x5C, dreq.segment().get(ValueLayout.JAVA_BYTE, 35), "the reserved byte is kept");
        assertEquals(220, dreq.privateDataLength());
        assertEquals(0x33, dreq.privateData()[0]);

        assertEquals(32, new CmRtu().privateDataOffset());
        assertEquals(224, new CmRtu().wrap(mad(header(MadHeader.ATTR_RTU))).privateDataLength());
        assertEquals(224, new CmDrep().wrap(mad(header(MadHeader.ATTR_DREP))).privateDataLength());
    }

    @Test
    void sidrMessagesSitAtTheirOffsets() {
        byte[] b = header(MadHeader.ATTR_SIDR_REP);
        b[27] = 7; b[28] = 1; b[29] = 0;
        b[32] = 0x00; b[33] = 0x12; b[34] = 0x34;
        b[43] = 0x19;
        b[44] = (byte) 0x80; b[45] = 1;
        b[120] = 0x55;
        SidrRep r = new SidrRep().wrap(mad(b));
        assertEquals(7, r.requestId());
        assertEquals(SidrRep.STATUS_UNSUPPORTED, r.status());
        assertEquals(0x1234, r.qpn());
        assertEquals(0x19, r.serviceId());
        assertEquals(0x80010000, r.qkey());
        assertEquals(136, r.privateDataLength());
        assertEquals(0x55, r.privateData()[0]);
        byte[] q = header(MadHeader.ATTR_SIDR_REQ);
        q[27] = 5; q[28] = (byte) 0xFF; q[29] = (byte) 0xFF; q[39] = 0x42; q[40] = 0x66;
        SidrReq s = new SidrReq().wrap(mad(q));
        assertEquals(5, s.requestId());
        assertEquals(0xFFFF, s.pkey());
        assertEquals(0x42, s.serviceId());
        assertEquals(216, s.privateDataLength());
        assertEquals(0x66, s.privateData()[0]);
    }

    @Test
    void privateDataLongerThanTheMessageHoldsIsRefused() {
        CmRep r = new CmRep().wrap(Arena.ofAuto().allocate(256));
        assertThrows(IllegalArgumentException.class, () -> r.setPrivateData(new byte[197], 0, 197));
        assertThrows(IllegalArgumentException.class, () -> new CmRej().wrap(Arena.ofAuto().allocate(256))
                .ari(new byte[73], 73));
        assertThrows(IllegalArgumentException.class, () -> new CmReq().wrap(Arena.ofAuto().allocate(255)));
    }

    @Test
    void cmaHeaderIpv4AndIpv6AtTheirOffsets() throws Exception {
        MemorySegment s = Arena.ofAuto().allocate(256);
        CmaHeader.write(s, 164, InetAddress.getByName("10.1.2.3"), 0xBEEF, InetAddress.getByName("10.4.5.6"));
        byte[] b = bytes(s);
        assertEquals(0, b[164]);
        assertEquals(0x40, b[165]);
        assertEquals((byte) 0xBE, b[166]);
        assertEquals((byte) 0xEF, b[167]);
        for (int i = 0; i < 12; i++) {
            assertEquals(0, b[168 + i]);
            assertEquals(0, b[184 + i]);
        }
        assertEquals(10, b[180]);
        assertEquals(3, b[183]);
        assertEquals(6, b[199]);
        assertEquals(InetAddress.getByName("10.1.2.3"), CmaHeader.srcAddress(s, 164));
        assertEquals(InetAddress.getByName("10.4.5.6"), CmaHeader.dstAddress(s, 164));
        assertEquals(0xBEEF, CmaHeader.port(s, 164));

        InetAddress src6 = InetAddress.getByName("fd72:646d:6134:6a00::1");
        InetAddress dst6 = InetAddress.getByName("fd72:646d:6134:6a00::2");
        CmaHeader.write(s, 0, src6, 7174, dst6);
        b = bytes(s);
        assertEquals(0x60, b[1]);
        assertEquals((byte) 0xFD, b[4]);
        assertEquals(1, b[19]);
        assertEquals((byte) 0xFD, b[20]);
        assertEquals(2, b[35]);
        assertEquals(src6, CmaHeader.srcAddress(s, 0));
        assertEquals(dst6, CmaHeader.dstAddress(s, 0));
        s.set(ValueLayout.JAVA_BYTE, 1, (byte) 0x50);
        assertFalse(CmaHeader.isValid(s, 0));
        assertNull(CmaHeader.srcAddress(s, 0));
        assertThrows(IllegalArgumentException.class, () -> CmaHeader.write(s, 0, src6, 1,
                InetAddress.getByName("10.0.0.1")));
    }

    @Test
    void serviceIdsOfTheIpPortSpaces() {
        assertEquals(0x0000000001061C06L, ServiceId.of(ServiceId.PS_TCP, 7174));
        assertEquals(0x0000000001110001L, ServiceId.of(ServiceId.PS_UDP, 1));
        assertEquals(ServiceId.PS_TCP, ServiceId.portSpace(0x0000000001061C06L));
        assertEquals(7174, ServiceId.port(0x0000000001061C06L));
        assertEquals(-1, ServiceId.portSpace(0x1234_0000_0106_0000L));
        assertTrue(ServiceId.carriesCmaHeader(0x01060001L));
        assertFalse(ServiceId.carriesCmaHeader(0x013F0001L));
    }

    @Test
    void malformedMadsAreRefusedWithAReasonAndNothingThrows() {
        assertEquals(MadHeader.ATTR_RTU, MadCheck.check(mad(header(MadHeader.ATTR_RTU)), 256));
        assertEquals(MadCheck.BAD_LENGTH, MadCheck.check(mad(header(MadHeader.ATTR_RTU)), 255));
        assertEquals(MadCheck.BAD_LENGTH, MadCheck.check(Arena.ofAuto().allocate(100), 100));
        assertEquals(MadCheck.BAD_LENGTH, MadCheck.check(null, 256));
        byte[] b = header(MadHeader.ATTR_RTU);
        b[0] = 2;
        assertEquals(MadCheck.BAD_BASE_VERSION, MadCheck.check(mad(b), 256));
        b = header(MadHeader.ATTR_RTU);
        b[1] = 0x04;
        assertEquals(MadCheck.BAD_CLASS, MadCheck.check(mad(b), 256));
        b = header(MadHeader.ATTR_RTU);
        b[2] = 1;
        assertEquals(MadCheck.BAD_CLASS_VERSION, MadCheck.check(mad(b), 256));
        b = header(MadHeader.ATTR_RTU);
        b[3] = (byte) 0x81;
        assertEquals(MadCheck.BAD_METHOD, MadCheck.check(mad(b), 256));
        assertEquals(MadCheck.BAD_ATTRIBUTE, MadCheck.check(mad(header(0x0019)), 256));
        assertEquals(MadCheck.BAD_ATTRIBUTE, MadCheck.check(mad(header(0xFFFF)), 256));
        b = header(MadHeader.ATTR_REJ);
        b[33] = (byte) (73 << 1);
        assertEquals(MadCheck.BAD_FIELD, MadCheck.check(mad(b), 256));
        b = header(MadHeader.ATTR_REQ);
        b[74] = (byte) (6 << 4);
        assertEquals(MadCheck.BAD_FIELD, MadCheck.check(mad(b), 256));
        b = header(MadHeader.ATTR_REQ);
        b[74] = (byte) (3 << 4);
        b[36] = 0x01; b[37] = 0x06; b[38] = 0x1C; b[39] = 0x06;   // an RDMA_PS_TCP service id...
        assertEquals(MadCheck.BAD_CMA_HEADER, MadCheck.check(mad(b), 256)); // ...without a CMA header
        b[165] = 0x40;
        assertEquals(MadHeader.ATTR_REQ, MadCheck.check(mad(b), 256));
        Random rnd = new Random(12);
        MemorySegment s = Arena.ofAuto().allocate(256);
        for (int i = 0; i < 10_000; i++) {
            byte[] junk = new byte[256];
            rnd.nextBytes(junk);
            if (i % 2 == 0) {
                System.arraycopy(header(0x10 + rnd.nextInt(9)), 0, junk, 0, 24);
            }
            MemorySegment.copy(junk, 0, s, ValueLayout.JAVA_BYTE, 0, 256);
            int r = MadCheck.check(s, 256);
            assertTrue(r < 0 || r >= 0x10 && r <= 0x18, "attribute or reason, got " + r);
        }
    }
}
