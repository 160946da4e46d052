// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;

/**
 * What the RDMAP layer asks of the device's memory table: the memory behind an STag, checked for one
 * use, and invalidation. The device checks that the STag is valid, belongs to the QP's protection
 * domain (and, for a type-2 window, to this QP) and grants the access; the RDMAP layer checks the bounds
 * of each segment against the {@link Window} it gets back and copies only inside it. Called on the
 * thread that drives the receiver or the sender; implementations must not block.
 */
public interface StagResolver {
    /** What the memory is used for, so the device checks the matching access flag. */
    enum Use {
        /** An inbound RDMA Write places data (REMOTE_WRITE). */
        REMOTE_WRITE,
        /** An inbound Read Request reads the source (REMOTE_READ). */
        REMOTE_READ,
        /** A Read Response places data into the requester's own sink, named by its lkey (LOCAL_WRITE). */
        LOCAL_WRITE
    }

    /**
     * The memory an STag grants: {@code segment} holds exactly the STag's range (a slice of the
     * registered memory, no byte more), and {@code base} is the tagged offset of its first byte (the
     * region's iova or address). One instance is reused for every lookup; allocation-free.
     */
    final class Window {
        private MemorySegment segment = MemorySegment.NULL;
        private long base;

        /** Creates an empty window. */
        public Window() {
        }

        /**
         * Sets the window.
         *
         * @param segment exactly the STag's memory
         * @param base    the tagged offset of {@code segment}'s first byte
         */
        public void set(MemorySegment segment, long base) {
            this.segment = segment;
            this.base = base;
        }

        /** {@return the STag's memory} */
        public MemorySegment segment() {
            return segment;
        }

        /** {@return the tagged offset of the segment's first byte} */
        public long base() {
            return base;
        }

        /**
         * {@return where {@code [taggedOffset, taggedOffset + length)} starts in {@link #segment()}, or -1
         * when any byte of it lies outside (unsigned 64-bit arithmetic: an offset below the base or one
         * that wraps is outside)}
         *
         * @param taggedOffset the first tagged offset
         * @param length       the number of bytes, 0 or more
         */
        public long offsetOf(long taggedOffset, long length) {
            long at = taggedOffset - base;
            long size = segment.byteSize();
            if (Long.compareUnsigned(at, size) > 0 || length > size - at) {
                return -1;
            }
            return at;
        }
    }

    /**
     * Looks up an STag for one use.
     *
     * @param stag   the STag from the wire or the Read Request
     * @param use    what it is for
     * @param window filled with the STag's memory when granted
     * @return null when granted, else why not
     */
    StagError resolve(int stag, Use use, Window window);

    /**
     * Invalidates an STag for a Send with Invalidate (the device's rules for remote invalidation).
     *
     * @param stag the STag named by the peer
     * @return null when invalidated, {@link StagError#NOT_ASSOCIATED} when it belongs to another
     *         protection domain, else {@link StagError#INVALID_STAG}
     */
    StagError invalidate(int stag);
}
