// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ThreadLocalRandom;
import org.rdma4j.cm.wire.CmDrep;
import org.rdma4j.cm.wire.CmDreq;
import org.rdma4j.cm.wire.CmMra;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.CmRtu;
import org.rdma4j.cm.wire.CommIdMessage;
import org.rdma4j.cm.wire.MadHeader;

/**
 * CM messages as a third party forges them: {@code theirs} is the communication ID it claims as the
 * sender's (the victim's peer's), {@code ours} the one it names as the receiver's (the victim's).
 */
final class CmForgery {
    private CmForgery() {
    }

    private static long tid() {
        return ThreadLocalRandom.current().nextLong();
    }

    private static byte[] bytes(MemorySegment m) {
        return m.toArray(ValueLayout.JAVA_BYTE);
    }

    static byte[] rej(int theirs, int ours, int msg, int reason, long ariGuid) {
        MemorySegment m = MemorySegment.ofArray(new byte[256]);
        CmRej r = new CmRej();
        r.wrap(m).clearAndInit(tid());
        r.localCommId(theirs).remoteCommId(ours).messageRejected(msg).reason(reason);
        if (ariGuid != 0) {
            r.ari(java.nio.ByteBuffer.allocate(8).putLong(ariGuid).array(), 8);
        }
        return bytes(m);
    }

    static byte[] dreq(int theirs, int ours, int qpn) {
        MemorySegment m = MemorySegment.ofArray(new byte[256]);
        CmDreq d = new CmDreq();
        d.wrap(m).clearAndInit(tid());
        d.localCommId(theirs).remoteCommId(ours).remoteQpn(qpn);
        return bytes(m);
    }

    static byte[] drep(int theirs, int ours) {
        return ids(new CmDrep(), theirs, ours);
    }

    static byte[] rtu(int theirs, int ours) {
        return ids(new CmRtu(), theirs, ours);
    }

    static byte[] mra(int theirs, int ours, int msg) {
        MemorySegment m = MemorySegment.ofArray(new byte[256]);
        CmMra r = new CmMra();
        r.wrap(m).clearAndInit(tid());
        r.localCommId(theirs).remoteCommId(ours).messageMraed(msg).serviceTimeout(1);
        return bytes(m);
    }

    /** A LAP (load alternate path), header and both IDs. */
    static byte[] lap(int theirs, int ours) {
        MemorySegment m = MemorySegment.ofArray(new byte[256]);
        MadHeader.writeCm(m, 3, MadHeader.ATTR_LAP, tid());
        m.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                CommIdMessage.LOCAL_COMM_ID_OFFSET, theirs);
        m.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                CommIdMessage.REMOTE_COMM_ID_OFFSET, ours);
        return bytes(m);
    }

    private static <T extends CommIdMessage<T>> byte[] ids(CommIdMessage<T> msg, int theirs, int ours) {
        MemorySegment m = MemorySegment.ofArray(new byte[256]);
        msg.wrap(m).clearAndInit(tid());
        msg.localCommId(theirs).remoteCommId(ours);
        return bytes(m);
    }

    /** {@return the sum of the counts in {@link CmId#droppedMessages()}} */
    static long dropped() {
        return CmId.droppedMessages().values().stream().mapToLong(Long::longValue).sum();
    }
}
