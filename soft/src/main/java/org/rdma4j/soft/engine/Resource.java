// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.wire.Psn;

/**
 * A responder resource (one of max_dest_rd_atomic): what a READ or atomic request did, so that a
 * duplicate can be answered without executing it twice.
 */
final class Resource {
    boolean valid;
    boolean atomic;
    int firstPsn;
    int lastPsn;
    long originalValue;
    /** A READ's request (rkey, address, length): a duplicate must ask for the same or a part of it. */
    int rkey;
    long va;
    long length;

    /** The responder's max_dest_rd_atomic resources, reused oldest first. Runs only inside the QP task. */
    static final class Ring {
        /** Created by the first READ or atomic: most QPs of a large table never see one. */
        private Resource[] slots;
        private int size = 1;
        private int next;

        /** modify(MAX_DEST_RD_ATOMIC): {@code n} fresh resources (at least one). */
        void resize(int n) {
            size = Math.max(1, n);
            slots = null;
            next = 0;
        }

        void clear() {
            if (slots != null) {
                for (Resource r : slots) {
                    r.valid = false;
                }
            }
        }

        /** The resource to record a new READ or atomic in (the oldest is forgotten). */
        Resource next() {
            Resource[] s = slots;
            if (s == null) {
                s = new Resource[size];
                for (int i = 0; i < s.length; i++) {
                    s[i] = new Resource();
                }
                slots = s;
            }
            Resource r = s[next];
            next = (next + 1) % s.length;
            return r;
        }

        /** The remembered READ whose response PSNs include {@code psn}, or null. */
        Resource readContaining(int psn) {
            if (slots == null) {
                return null;
            }
            for (Resource r : slots) {
                if (r.valid && !r.atomic && Psn.compare(psn, r.firstPsn) >= 0 && Psn.compare(psn, r.lastPsn) <= 0) {
                    return r;
                }
            }
            return null;
        }

        /** The remembered atomic sent with PSN {@code psn}, or null. */
        Resource atomicAt(int psn) {
            if (slots == null) {
                return null;
            }
            for (Resource r : slots) {
                if (r.valid && r.atomic && r.firstPsn == psn) {
                    return r;
                }
            }
            return null;
        }
    }
}
