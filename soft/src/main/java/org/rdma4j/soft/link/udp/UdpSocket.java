// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.lang.foreign.MemorySegment;

/**
 * One of {@link UdpLink}'s socket modes: how its datagrams leave and arrive. The link builds every
 * datagram (and, for a mode that writes its own IP header, the IP header too) and checks every one it
 * receives; the socket only moves them. {@link #send} and {@link #setHopLimitAndClass} are called under
 * the link's send lock, {@link #receive} and {@link #close} by one thread at a time: the holder of the
 * link's receive token (its receive agent, or a thread polling the link).
 */
interface UdpSocket {
    /** Batch size of one {@link #receive}: a full batch means more datagrams are probably queued. */
    int BATCH = 32;

    /** Most datagrams one {@link #sendStaged} sends. */
    int SEND_BATCH = 16;

    /**
     * Null when this mode sends several datagrams in one call ({@link #stage}, {@link #sendStaged});
     * else why not, in one line.
     */
    default String sendBatchUnavailable() {
        return "this socket mode sends one datagram per call";
    }

    /**
     * Stages datagram {@code slot} (0..{@link #SEND_BATCH}-1) of the next {@link #sendStaged}: as
     * {@link #send}'s arguments; the bytes must stay put until then. Only where
     * {@link #sendBatchUnavailable()} is null; under the link's send lock.
     */
    default void stage(int slot, MemorySegment datagram, int length, byte[] destination, int destinationPort) {
        throw new UnsupportedOperationException(sendBatchUnavailable());
    }

    /**
     * Sends staged datagrams {@code from}..{@code from+count}-1, in order, in as few calls as the kernel
     * allows; returns how many were sent (a datagram whose call failed is dropped, the others still go).
     */
    default int sendStaged(int from, int count) {
        throw new UnsupportedOperationException(sendBatchUnavailable());
    }

    /** From now on one call per datagram, for {@code reason} (what {@link #sendBatchUnavailable()} says). */
    default void stopSendBatching(String reason) {
    }

    /** How many batched send calls were made (each sends one or more datagrams). */
    default long sendBatchCalls() {
        return 0;
    }

    /** Messages sent with UDP segmentation offload (GSO: one message, several datagrams). */
    default long gsoMessages() {
        return 0;
    }

    /** Datagrams that left in {@link #gsoMessages()}. */
    default long gsoDatagrams() {
        return 0;
    }

    /** Bytes of IP header the link writes in front of the UDP header and sends (raw IPv4: 20); else 0. */
    default int ipHeaderLength() {
        return 0;
    }

    /** The receive buffer as the kernel reports it (SO_RCVBUF, bytes). */
    int receiveBufferBytes();

    /** Makes the next datagrams leave with this TTL/hop limit and TOS/traffic class, where the mode can. */
    void setHopLimitAndClass(boolean multicast, int ttl, int tos);

    /**
     * Sends {@code length} bytes of {@code datagram} (the UDP payload, or with {@link #ipHeaderLength()}
     * the whole IP packet) to {@code destination}:{@code destinationPort}; negative when it failed.
     */
    long send(MemorySegment datagram, int length, byte[] destination, int destinationPort);

    /**
     * Waits a short while (a socket timeout) for datagrams and hands each to {@code datagrams} in one
     * receive batch; returns how many arrived (0: none, or the socket is closing).
     */
    int receive(UdpDatagrams datagrams, UdpDatagrams.Scratch scratch);

    /**
     * Like {@link #receive}, but never blocks: takes only the datagrams queued now (0 if none). Only
     * where {@link #canReceiveNow()}.
     */
    default int receiveNow(UdpDatagrams datagrams, UdpDatagrams.Scratch scratch) {
        return 0;
    }

    /**
     * Waits up to {@code timeoutMs} until a datagram is queued (poll(2)); true when one is (or the wait
     * was woken by {@link #wakeReceiver()}). Only where {@link #canReceiveNow()}.
     */
    default boolean awaitReadable(int timeoutMs) {
        return false;
    }

    /**
     * Like {@link #awaitReadable}, for the link's receive agent, which waits without the receive token
     * (so a poller or an event waiter can take the socket meanwhile): state of its own.
     */
    default boolean agentAwaitReadable(int timeoutMs) {
        return false;
    }

    /**
     * Makes an {@link #awaitReadable} in progress return soon: a datagram of length 0 to the socket's
     * own address, which the link's receive path ignores. Any thread.
     */
    default void wakeReceiver() {
    }

    /** Whether {@link #receiveNow} works in this mode (a caller may then receive on its own thread). */
    default boolean canReceiveNow() {
        return false;
    }

    /** Datagrams the kernel dropped for a full receive queue, or -1 if the mode cannot tell. */
    long socketDrops();

    /** Makes a {@link #receive} in progress return soon (the link is closing). */
    void interruptReceive();

    /** Releases the socket (receive thread, after its last receive). */
    void close();
}
