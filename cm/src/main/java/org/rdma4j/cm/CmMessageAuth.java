// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.security.SecureRandom;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import org.rdma4j.cm.CmId.State;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.verbs.Gid;

/**
 * Who may change a connection: finds the id a received CM message speaks for by everything the message
 * must match, and drops (and counts) the rest. The rules are those of the kernel's IB CM (cm.c:
 * cm_acquire_id, cm_acquire_rejected_id, cm_acquire_mraed_id, cm_dreq_handler), plus the peer's GID:
 * <ul>
 * <li>REP, MRA of a REQ, REJ of a REQ, SIDR_REP: our communication ID (the remote one is not known yet;
 *     once an MRA told it, it must match too);</li>
 * <li>RTU, DREQ, DREP, MRA of a REP, REJ of a REP or of anything else: both communication IDs;</li>
 * <li>REJ with reason TIMEOUT: the sender's communication ID and the CA GUID in its ARI, as the peer
 *     named them before (our ID too, when the sender knew it);</li>
 * <li>DREQ: also the QPN it names must be ours;</li>
 * <li>every one: it came from the connection's peer GID on the agent (port) the connection uses.</li>
 * </ul>
 * LAP and APR (alternate paths, not offered) never change anything. Our communication IDs come from a
 * {@link SecureRandom}: an ID seen in one connection (an MRA answers every REQ at once) tells nothing
 * about another's. Guarded by the engine's lock, except the counters, which anyone may read.
 */
final class CmMessageAuth {
    record RemoteKey(Gid gid, int commId) {
    }

    /** The messages the counters are kept for, in the order of their attribute ids (0x10..0x1A), then others. */
    private static final String[] NAMES = {"REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP",
        "LAP", "APR", "OTHER"};

    private final Map<Integer, CmId> byLocal = new HashMap<>();
    private final Map<RemoteKey, CmId> byRemote = new HashMap<>();
    private final SecureRandom random = new SecureRandom();
    private final AtomicLongArray dropped = new AtomicLongArray(NAMES.length);

    /** {@return a fresh local communication ID for {@code id}, unpredictable, non-zero, not in use; indexed} */
    int newLocalId(CmId id) {
        int c;
        do {
            c = random.nextInt();
        } while (c == 0 || byLocal.containsKey(c));
        byLocal.put(c, id);
        return c;
    }

    /** Indexes {@code id} by its peer's GID and communication ID (repeated REQs and SIDR_REQs find it). */
    void indexRemote(CmId id) {
        byRemote.put(new RemoteKey(id.dgid, id.conn.remoteCommId), id);
    }

    /** {@return the id the peer {@code gid} made with its communication ID {@code theirId}, or null} */
    CmId byRemote(Gid gid, int theirId) {
        return byRemote.get(new RemoteKey(gid, theirId));
    }

    void unindex(CmId id) {
        if (id.conn.localCommId != 0 && byLocal.get(id.conn.localCommId) == id) {
            byLocal.remove(id.conn.localCommId);
        }
        if (id.dgid != null) {
            byRemote.remove(new RemoteKey(id.dgid, id.conn.remoteCommId), id);
        }
    }

    int size() {
        return byLocal.size() + byRemote.size();
    }

    /**
     * A message whose remote ID may not be known to us yet (REP, MRA of a REQ, REJ of a REQ, SIDR_REP):
     * our ID, the peer's GID, and their ID once we know it ({@code theirId} 0: the sender did not say).
     */
    CmId forLocal(CmAgent a, Gid from, int attr, int ourId, int theirId) {
        CmId id = byLocal.get(ourId);
        if (id == null || id.agent != a || !from.equals(id.dgid)
                || (id.conn.remoteCommId != 0 && theirId != 0 && theirId != id.conn.remoteCommId)) {
            return drop(a, attr);
        }
        return id;
    }

    /** A message of an established exchange (RTU, DREQ, DREP, MRA of a REP, REJ of a REP): both IDs and the GID. */
    CmId forBoth(CmAgent a, Gid from, int attr, int ourId, int theirId) {
        CmId id = byLocal.get(ourId);
        if (id == null || id.agent != a || !from.equals(id.dgid) || id.conn.remoteCommId != theirId || theirId == 0) {
            return drop(a, attr);
        }
        return id;
    }

    /** A REJ, by what it rejects (cm_acquire_rejected_id); {@code rej} wraps it. */
    CmId forRej(CmAgent a, Gid from, CmRej rej) {
        int ourId = rej.remoteCommId();
        int theirId = rej.localCommId();
        if (rej.reason() == CmRej.REASON_TIMEOUT) {
            CmId id = byRemote(from, theirId);
            byte[] ari = new byte[CmRej.ARI_LENGTH];
            rej.ari(ari);
            long guid = java.nio.ByteBuffer.wrap(ari).getLong();
            if (id == null || id.agent != a || guid != id.conn.remoteCaGuid || (ourId != 0 && ourId != id.conn.localCommId)) {
                return drop(a, MadHeader.ATTR_REJ);
            }
            return id;
        }
        if (rej.messageRejected() == CmRej.MSG_REQ) {
            CmId id = forLocal(a, from, MadHeader.ATTR_REJ, ourId, theirId);
            return id == null || id.state == State.REQ_SENT ? id : drop(a, MadHeader.ATTR_REJ);
        }
        return forBoth(a, from, MadHeader.ATTR_REJ, ourId, theirId);
    }

    /** {@return whether the QPN a DREQ names is {@code id}'s own; if not, the DREQ is dropped and counted} */
    boolean qpnMatches(CmAgent a, CmId id, int qpn) {
        if (qpn == (id.conn.localQpn & 0xFFFFFF)) {
            return true;
        }
        drop(a, MadHeader.ATTR_DREQ);
        return false;
    }

    /** Counts a message that changes nothing (forged, stale, or of a kind not offered); returns null. */
    CmId drop(CmAgent a, int attr) {
        a.unmatched++;
        int i = attr - MadHeader.ATTR_REQ;
        i = i >= 0 && i < NAMES.length - 1 ? i : NAMES.length - 1;
        dropped.incrementAndGet(i);
        CmLog.dropped(a.deviceName, a.portNum, NAMES[i]);
        return null;
    }

    /** {@return the messages dropped so far, by message name (REQ, MRA, REJ, ..., APR, OTHER)} */
    Map<String, Long> dropped() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < NAMES.length; i++) {
            m.put(NAMES[i], dropped.get(i));
        }
        return m;
    }
}
