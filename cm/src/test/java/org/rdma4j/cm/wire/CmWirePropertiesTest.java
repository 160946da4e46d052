// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Every field of REQ and REP reads back what was written, whatever its neighbours hold. */
class CmWirePropertiesTest {
    @Property(tries = 500)
    void reqFieldsRoundTripIndependently(@ForAll int commId, @ForAll long sid, @ForAll long guid, @ForAll int qkey,
                                         @ForAll @IntRange(max = 0xFFFFFF) int qpn, @ForAll @IntRange(max = 255) int rr,
                                         @ForAll @IntRange(max = 255) int id, @ForAll @IntRange(max = 31) int rto,
                                         @ForAll @IntRange(max = 3) int transport, @ForAll boolean fc,
                                         @ForAll @IntRange(max = 0xFFFFFF) int psn, @ForAll @IntRange(max = 31) int lto,
                                         @ForAll @IntRange(max = 7) int retry, @ForAll @IntRange(max = 0xFFFF) int pkey,
                                         @ForAll @IntRange(max = 15) int mtu, @ForAll @IntRange(max = 7) int rnr,
                                         @ForAll @IntRange(max = 15) int maxRetries, @ForAll boolean srq,
                                         @ForAll @IntRange(max = 0xFFFFF) int flow, @ForAll @IntRange(max = 63) int rate,
                                         @ForAll @IntRange(max = 15) int sl, @ForAll @IntRange(max = 31) int ack,
                                         @ForAll long noise) {
        MemorySegment s = Arena.ofAuto().allocate(256);
        byte[] junk = new byte[256];
        new Random(noise).nextBytes(junk);
        MemorySegment.copy(junk, 0, s, ValueLayout.JAVA_BYTE, 0, 256); // the setters must not depend on zeroes
        CmReq r = new CmReq().wrap(s);
        r.localCommId(commId).serviceId(sid).localCaGuid(guid).localQkey(qkey).localQpn(qpn).responderResources(rr)
                .initiatorDepth(id).remoteCmResponseTimeout(rto).transportServiceType(transport).flowControl(fc)
                .startingPsn(psn).localCmResponseTimeout(lto).retryCount(retry).pkey(pkey).pathMtu(mtu)
                .rnrRetryCount(rnr).maxCmRetries(maxRetries).srq(srq).primaryFlowLabel(flow).primaryPacketRate(rate)
                .primarySl(sl).primaryLocalAckTimeout(ack);
        assertEquals(commId, r.localCommId());
        assertEquals(sid, r.serviceId());
        assertEquals(guid, r.localCaGuid());
        assertEquals(qkey, r.localQkey());
        assertEquals(qpn, r.localQpn());
        assertEquals(rr, r.responderResources());
        assertEquals(id, r.initiatorDepth());
        assertEquals(rto, r.remoteCmResponseTimeout());
        assertEquals(transport, r.transportServiceType());
        assertEquals(fc, r.flowControl());
        assertEquals(psn, r.startingPsn());
        assertEquals(lto, r.localCmResponseTimeout());
        assertEquals(retry, r.retryCount());
        assertEquals(pkey, r.pkey());
        assertEquals(mtu, r.pathMtu());
        assertEquals(rnr, r.rnrRetryCount());
        assertEquals(maxRetries, r.maxCmRetries());
        assertEquals(srq, r.srq());
        assertEquals(flow, r.primaryFlowLabel());
        assertEquals(rate, r.primaryPacketRate());
        assertEquals(sl, r.primarySl());
        assertEquals(ack, r.primaryLocalAckTimeout());
        assertEquals(junk[0], s.get(ValueLayout.JAVA_BYTE, 0), "the MAD header is not touched");
        assertEquals(junk[28], s.get(ValueLayout.JAVA_BYTE, 28), "reserved bytes are not touched");
        assertEquals(junk[164], s.get(ValueLayout.JAVA_BYTE, 164), "the private data is not touched");
    }

    @Property(tries = 300)
    void privateDataRoundTripsAndTheRestOfTheFieldIsZeroed(@ForAll @IntRange(max = 196) int length, @ForAll long seed) {
        byte[] pd = new byte[length];
        new Random(seed).nextBytes(pd);
        MemorySegment s = Arena.ofAuto().allocate(256);
        s.fill((byte) 0x5A);
        CmRep rep = new CmRep().wrap(s);
        rep.setPrivateData(pd, 0, length);
        byte[] all = rep.privateData();
        byte[] head = new byte[length];
        System.arraycopy(all, 0, head, 0, length);
        assertArrayEquals(pd, head);
        for (int i = length; i < all.length; i++) {
            assertEquals(0, all[i]);
        }
        assertEquals(0x5A, s.get(ValueLayout.JAVA_BYTE, CmRep.PRIVATE_DATA_OFFSET - 1));
    }

    @Property(tries = 2000)
    void noMadMakesTheCheckThrow(@ForAll long seed, @ForAll @IntRange(max = 300) int length) {
        byte[] b = new byte[Math.max(length, 1)];
        new Random(seed).nextBytes(b);
        if (b.length > 3) {
            b[0] = 1;
            b[1] = 7;
            b[2] = 2;
            b[3] = 3;
        }
        MemorySegment s = MemorySegment.ofArray(b);
        int r = MadCheck.check(s, length);
        assertTrue(r < 0 || r >= MadHeader.ATTR_REQ && r <= MadHeader.ATTR_SIDR_REP);
    }
}
