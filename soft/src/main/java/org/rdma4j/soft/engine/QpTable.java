// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A device's QP table (rxe's QP pool): QP numbers from {@link Hca#FIRST_QPN} to live {@link QpEngine}s,
 * read without locks on the data path (every arriving packet names its QP), written under this
 * table's monitor. Paged, so that a device holding few QPs allocates few pages and a walk skips the
 * empty ones; numbers are handed out in turn, so a number comes back only after the table wrapped.
 */
final class QpTable implements Iterable<QpEngine> {
    /** The table is paged: a device holding few QPs allocates few pages. */
    private static final int PAGE_BITS = 12;
    private static final int PAGE = 1 << PAGE_BITS;

    private final AtomicReferenceArray<AtomicReferenceArray<QpEngine>> qpPages =
            new AtomicReferenceArray<>(Hca.MAX_QP / PAGE);
    /** Where the search for a free QP slot starts (guarded by this). */
    private int nextQpSlot;
    private int qpCount;
    /** Live QPs per page (guarded by this): an empty page is dropped, so walking the table skips it. */
    private final int[] pageCounts = new int[Hca.MAX_QP / PAGE];

    /**
     * Registers a QP and returns its number, or -1 if the table is full. Numbers are handed out in turn
     * from where the last one was, so a number comes back only after the table wrapped (as rxe's).
     */
    synchronized int add(QpEngine qp) {
        if (qpCount == Hca.MAX_QP) {
            return -1;
        }
        for (int i = 0; i < Hca.MAX_QP; i++) {
            int slot = (nextQpSlot + i) & (Hca.MAX_QP - 1);
            AtomicReferenceArray<QpEngine> page = qpPages.get(slot >>> PAGE_BITS);
            if (page == null) {
                page = new AtomicReferenceArray<>(PAGE);
                qpPages.set(slot >>> PAGE_BITS, page);
            }
            if (page.get(slot & (PAGE - 1)) == null) {
                page.set(slot & (PAGE - 1), qp);
                nextQpSlot = slot + 1;
                qpCount++;
                pageCounts[slot >>> PAGE_BITS]++;
                return Hca.FIRST_QPN + slot;
            }
        }
        return -1;
    }

    /**
     * The next QP created gets number {@code qpn} if it is free: QP numbers come back once the table
     * wraps; tests use this to meet a reused number without creating 262144 QPs.
     */
    synchronized void nextQpnHint(int qpn) {
        nextQpSlot = Math.floorMod(qpn - Hca.FIRST_QPN, Hca.MAX_QP);
    }

    /** Removes QP {@code qpn}; returns it, or null if there was none. */
    synchronized QpEngine remove(int qpn) {
        int slot = qpn - Hca.FIRST_QPN;
        AtomicReferenceArray<QpEngine> page = slot >= 0 && slot < Hca.MAX_QP ? qpPages.get(slot >>> PAGE_BITS) : null;
        QpEngine qp = page == null ? null : page.getAndSet(slot & (PAGE - 1), null);
        if (qp != null) {
            qpCount--;
            if (--pageCounts[slot >>> PAGE_BITS] == 0) {
                qpPages.set(slot >>> PAGE_BITS, null);
            }
        }
        return qp;
    }

    /** The live QP numbered {@code qpn}, or null. Any thread, without locks. */
    QpEngine get(int qpn) {
        int slot = qpn - Hca.FIRST_QPN;
        if (slot < 0 || slot >= Hca.MAX_QP) {
            return null;
        }
        AtomicReferenceArray<QpEngine> page = qpPages.get(slot >>> PAGE_BITS);
        return page == null ? null : page.get(slot & (PAGE - 1));
    }

    /** How many QPs the device holds. */
    synchronized int count() {
        return qpCount;
    }

    /** All live QPs, walking the table (control path: deregistration checks). */
    @Override
    public Iterator<QpEngine> iterator() {
        return new Iterator<>() {
            private int slot = -1;
            private QpEngine next = advance();

            private QpEngine advance() {
                while (++slot < Hca.MAX_QP) {
                    AtomicReferenceArray<QpEngine> page = qpPages.get(slot >>> PAGE_BITS);
                    if (page == null) {
                        slot |= PAGE - 1; // skip the page
                        continue;
                    }
                    QpEngine q = page.get(slot & (PAGE - 1));
                    if (q != null) {
                        return q;
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public QpEngine next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                QpEngine q = next;
                next = advance();
                return q;
            }
        };
    }
}
