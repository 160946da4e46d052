// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsResource;

/**
 * The general services interface (GSI) of one port: 256-byte management datagrams (MADs) sent from and
 * received on the port's QP1, the way the kernel's ib_mad layer offers them to ib_cm. A connection
 * manager built on verbs (the cm module's IB CM for the soft device) sends its REQ/REP/RTU/... through
 * it. Packets on the wire are UD SEND_ONLY from QPN 1 to QPN 1 with the GSI Q_Key 0x80010000 (RoCEv2:
 * with the IP header of the GIDs); a MAD that arrives with another Q_Key, P_Key or length is dropped
 * and counted, as rxe does. A provider that cannot offer QP1 (the native provider: the kernel owns it,
 * and librdmacm is the way there) does not implement {@link GsiAccess}.
 *
 * <p>One thread may send while another receives; two concurrent receivers are not supported. Nothing
 * blocks forever: {@link #receive} has a timeout, and {@link #close()} wakes a waiting receiver (EBADF).
 */
public interface GsiPort extends VerbsResource {
    /** Every MAD is this long. */
    int MAD_SIZE = 256;
    /** The Q_Key of QP1. */
    int GSI_QKEY = 0x8001_0000;

    /** {@return the port number (1-based) this is QP1 of} */
    int portNum();

    /** {@return the GID this port's MADs are sent from (the GID index given when it was opened)} */
    Gid localGid();

    /**
     * Sends one MAD ({@link #MAD_SIZE} bytes from {@code mad}) to QP1 of the port that owns {@code dest},
     * with P_Key {@code pkey} (0xffff: the default partition). Fire and forget, as a UD send is: a MAD
     * that is lost is the caller's to retransmit. EINVAL for a segment shorter than MAD_SIZE; EBADF
     * once closed.
     *
     * @param mad  the MAD; its first {@link #MAD_SIZE} bytes are sent
     * @param dest the GID of the destination port
     * @param pkey the 16-bit P_Key
     * @throws org.rdma4j.verbs.VerbsException EINVAL or EBADF as described
     */
    void send(MemorySegment mad, Gid dest, int pkey);

    /**
     * Waits up to {@code timeoutNanos} (0: do not wait) for the next MAD and copies it into {@code mad}
     * (at least {@link #MAD_SIZE} bytes); {@code from} gets where it came from. Returns false when none
     * came in time. EBADF when the port is closed before or during the wait (the waiter wakes).
     *
     * @param mad          where the MAD is copied, at least {@link #MAD_SIZE} bytes
     * @param from         filled with the sender
     * @param timeoutNanos the longest wait in nanoseconds; 0 = do not wait
     * @return true when a MAD was received, false after the timeout
     * @throws org.rdma4j.verbs.VerbsException EBADF as described
     */
    boolean receive(MemorySegment mad, Source from, long timeoutNanos);

    /** Where a received MAD came from: filled by {@link #receive}; reusable, so nothing is allocated. */
    final class Source {
        /** An empty source, to be filled by {@link #receive}. */
        public Source() {
        }

        /** The sender's GID (from the IP header on RoCEv2). */
        public Gid gid;
        /** The sending QP's number (the DETH source QPN: 1 for a GSI agent). */
        public int qpn;
        /** The P_Key of the BTH. */
        public int pkey;

        /** {@return the fields, for messages (the P_Key in hex)} */
        @Override
        public String toString() {
            return "Source[gid=" + gid + ", qpn=" + qpn + ", pkey=0x" + Integer.toHexString(pkey) + "]";
        }
    }

    /**
     * What a provider's {@link org.rdma4j.verbs.Context} implements when it can give out its QP1. One
     * GsiPort per port of a device at a time (the device's connection manager owns it).
     */
    interface GsiAccess {
        /**
         * Opens QP1 of port {@code portNum}, sending from GID index {@code gidIndex}. EINVAL for a bad port
         * or index; EBUSY while another GsiPort of that port is open (on any context of the device).
         *
         * @param portNum  the port, from 1
         * @param gidIndex the GID index MADs are sent from
         * @return the port's QP1; close it to give it back
         * @throws org.rdma4j.verbs.VerbsException EINVAL or EBUSY as described
         */
        GsiPort openGsi(int portNum, int gidIndex);
    }
}
