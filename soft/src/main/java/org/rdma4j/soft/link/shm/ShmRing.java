// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.rdma4j.soft.packet.Packet;

/**
 * One receiving device's shared-memory file: a header and {@link #lanes()} single-producer
 * single-consumer rings ("lanes"), one per sending device, of fixed-size packet slots. The receiving
 * device creates the file (mode 0600) and is every lane's consumer; a sending device maps it, claims a
 * free lane once (a CAS on the lane's state word, the only CAS) and is that lane's only producer.
 * <pre>
 * header (4096 bytes)
 *   0  magic "RDMA4JSH"      8 version    12 lanes     16 slots (power of 2)   20 slot bytes
 *  24  owner pid            32 owner start (epoch ms)  40 doorbell UDP port (127.0.0.1)
 *  48  owner GID (16)       64 owner UDP port          68 closed (1 once the owner closed)
 *  72  flags (1: the owner checks ICRCs; 2: the consumer sleeps on the futex at 128, not the doorbell)
 * 128  sleeping (the consumer is about to wait for a wake-up: a futex word, 1 while it sleeps)
 * 192  polled (System.nanoTime, CLOCK_MONOTONIC, of the owner's last poll: a thread of the owner is
 *      consuming the ring itself)
 * 256  claimed-lanes mask (bit i: lane i is ACTIVE or being freed; set by its producer, cleared by the consumer)
 * lane i at 4096 + i * laneBytes
 *   0  state: pid &lt;&lt; 8 | FREE/CLAIMED/ACTIVE/CLOSING       8 generation
 *  16  producer GID (16)    32 producer UDP port       40 producer start (epoch ms)
 * 128  tail (producer, release)                         256 head (consumer, release)
 * 512  slots: [length int][hop limit byte][traffic class byte][kind byte][burst last opcode byte]
 *             [burst packets int][burst MTU int][BTH onward ... ICRC]
 * </pre>
 * An entry is one slot or, since version 2, a run of consecutive slots:
 * <ul>
 *   <li>kind 0, a packet: the length is the datagram's, BTH onward with pad and ICRC; one slot.</li>
 *   <li>kind 1, a burst ({@link Packet#burstPackets}, only to a ring with {@link #FLAG_BURSTS}): the
 *       first packet's headers and the payload of all of them, no pad and no ICRC (the burst is not a
 *       RoCEv2 packet; the receiver checks it as the packets it stands for), written straight on from
 *       the first slot's data across the following slots, which carry no header of their own;
 *       {@link #slotsFor} slots, never wrapping past the ring's end.</li>
 *   <li>kind 2, a skip: the slots from here to the ring's end are unused (a burst that did not fit
 *       before the end starts at slot 0); the length is the number of slots skipped.</li>
 * </ul>
 * Head and tail are free-running longs on their own 128-byte lines (the adjacent-line prefetcher pulls
 * pairs of 64-byte lines). Everything either side reads from the mapping is checked before use against
 * its own copy of the layout (read once, at create or open): a corrupt or hostile peer can make a lane
 * unusable, never make this process read or write outside the mapping. This class is the file: its
 * layout, creating and opening it (with {@link ShmRingFiles}' trust checks), its owner's liveness, the
 * claiming of lanes and the consumer's sleeping word; a claimed lane's side is {@link ShmProducer}, the
 * owner's side {@link ShmConsumer}. Thread safety: a producer handle is used under its owner's lock;
 * the consume methods by one thread at a time (the link's consumer lock); the rest is thread safe.
 */
final class ShmRing implements AutoCloseable {
    static final long MAGIC = 0x524D_4134_4A53_4853L; // "RDMA4JSH" read as a big-endian long's bytes
    /** 2: slot kinds (bursts and skips); version 1 had single packets only. */
    static final int VERSION = 2;
    static final int HEADER_BYTES = 4096;
    static final int LANE_HEADER_BYTES = 512;
    static final int SLOT_HEADER_BYTES = 16;
    /** Room in a slot for the longest datagram (BTH onward, payload, pad, ICRC). */
    static final int SLOT_BYTES = align(SLOT_HEADER_BYTES + Packet.BUFFER_SIZE, 64);
    static final int MAX_LANES = 64;
    /** The most bytes (headers and payload) one burst entry carries. */
    static final int MAX_BURST_BYTES = 64 * 1024 + 64;
    /** Slot kinds (the byte at 6 of the slot header). */
    static final int KIND_PACKET = 0;
    static final int KIND_BURST = 1;
    static final int KIND_SKIP = 2;
    static final int MAX_SLOTS = 1 << 14;

    // header offsets
    private static final long H_MAGIC = 0;
    private static final long H_VERSION = 8;
    private static final long H_LANES = 12;
    private static final long H_SLOTS = 16;
    private static final long H_SLOT_BYTES = 20;
    private static final long H_PID = 24;
    private static final long H_START = 32;
    private static final long H_DOORBELL = 40;
    private static final long H_GID = 48;
    private static final long H_PORT = 64;
    private static final long H_CLOSED = 68;
    private static final long H_FLAGS = 72;
    /** Header flag: the owner checks the ICRC of what it receives (senders then compute it). */
    static final int FLAG_ICRC = 1;
    /**
     * Header flag: the owner's consumer sleeps in futex(2) on the sleeping word, so a producer that
     * takes the sleeper wakes it with FUTEX_WAKE; without it, with a datagram to the doorbell port.
     */
    static final int FLAG_FUTEX = 2;
    /** Header flag: the owner takes bursts (slot kind 1), so a sender may put a run of packets in one entry. */
    static final int FLAG_BURSTS = 4;
    static final long H_SLEEPING = 128;
    private static final long H_POLLED = 192;
    static final long H_CLAIMED = 256;
    // lane offsets
    static final long L_STATE = 0;
    private static final long L_GENERATION = 8;
    static final long L_GID = 16;
    static final long L_PORT = 32;
    static final long L_START = 40;
    static final long L_TAIL = 128;
    static final long L_HEAD = 256;

    static final int FREE = 0;
    static final int CLAIMED = 1;
    static final int ACTIVE = 2;
    static final int CLOSING = 3;
    /** The consumer found the lane corrupt and ignores it; its producer (or the reaper, once it is gone) frees it. */
    static final int BROKEN = 4;

    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final Path file;
    private final Arena arena;
    final MemorySegment map;
    private final boolean owner;
    private final int lanes;
    private final int slots;
    private final int mask;
    private final long laneBytes;
    /** The sleeping word as a segment of its own, for futex(2). */
    private final MemorySegment sleepWord;
    private volatile boolean closed;
    /** The owner's side: the lanes' consumer (its state is allocated at its first use). */
    private final ShmConsumer consumer;

    private ShmRing(Path file, Arena arena, MemorySegment map, boolean owner, int lanes, int slots) {
        this.file = file;
        this.arena = arena;
        this.map = map;
        this.owner = owner;
        this.lanes = lanes;
        this.slots = slots;
        this.mask = slots - 1;
        this.laneBytes = laneBytes(slots);
        this.sleepWord = map.asSlice(H_SLEEPING, 4);
        this.consumer = new ShmConsumer(this);
    }

    static int align(int n, int to) {
        return (n + to - 1) / to * to;
    }

    /** The consecutive slots an entry of {@code bytes} (BTH onward) takes. */
    static int slotsFor(int bytes) {
        return (SLOT_HEADER_BYTES + bytes + SLOT_BYTES - 1) / SLOT_BYTES;
    }

    static long laneBytes(int slots) {
        return LANE_HEADER_BYTES + (long) slots * SLOT_BYTES;
    }

    static long fileBytes(int lanes, int slots) {
        return HEADER_BYTES + lanes * laneBytes(slots);
    }

    /** Who a file or lane belongs to: a process (pid and start time) and a device address. */
    record Identity(long pid, long startMs, byte[] gid, int port) {}

    /** This process's start time in epoch milliseconds (0 if unknown), part of every identity. */
    static long processStartMs(ProcessHandle p) {
        return p.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(0L);
    }

    /** Whether the process {@code pid} that started at {@code startMs} still runs. */
    static boolean alive(long pid, long startMs) {
        if (pid <= 0) {
            return false;
        }
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .map(p -> startMs == 0 || processStartMs(p) == 0 || processStartMs(p) == startMs).orElse(false);
    }

    /**
     * Creates {@code file} (mode 0600) for the device {@code self}, replacing a stale file whose owner
     * process is gone. IOException if a live process owns it, or it cannot be made.
     */
    static ShmRing create(Path file, Identity self, int doorbellPort, int lanes, int slots) throws IOException {
        return create(file, self, doorbellPort, lanes, slots, FLAG_ICRC);
    }

    /** As above, with header {@code flags} ({@link #FLAG_ICRC}). */
    static ShmRing create(Path file, Identity self, int doorbellPort, int lanes, int slots, int flags)
            throws IOException {
        return create(file, self, doorbellPort, lanes, slots, flags, ShmRingFiles.FOR_THIS_PROCESS);
    }

    /**
     * As above, with {@code files}' checks: a file already there is replaced only when it is this
     * user's 0600 ring of a process that is gone; else IOException ({@link ShmRingFiles.Untrusted} for a squatter).
     */
    static ShmRing create(Path file, Identity self, int doorbellPort, int lanes, int slots, int flags,
                          ShmRingFiles files) throws IOException {
        if (lanes < 1 || lanes > MAX_LANES || slots < 2 || slots > MAX_SLOTS || Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("lanes 1.." + MAX_LANES + ", slots a power of 2 up to " + MAX_SLOTS);
        }
        long size = fileBytes(lanes, slots);
        FileChannel created;
        try {
            created = files.create(file);
        } catch (FileAlreadyExistsException e) {
            files.checkExisting(file); // a link, another user's or a loose mode: never reused nor removed
            Identity other = ownerOf(file);
            if (other != null && alive(other.pid(), other.startMs())) {
                throw new IOException(file + " belongs to the running process " + other.pid() + " (EEXIST)");
            }
            Files.deleteIfExists(file); // stale: its owner is gone
            created = files.create(file);
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = created) {
            ch.truncate(size);
            ch.position(size - 1);
            ch.write(java.nio.ByteBuffer.wrap(new byte[1]));
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            m.set(ValueLayout.JAVA_INT, H_VERSION, VERSION);
            m.set(ValueLayout.JAVA_INT, H_LANES, lanes);
            m.set(ValueLayout.JAVA_INT, H_SLOTS, slots);
            m.set(ValueLayout.JAVA_INT, H_SLOT_BYTES, SLOT_BYTES);
            m.set(ValueLayout.JAVA_LONG, H_PID, self.pid());
            m.set(ValueLayout.JAVA_LONG, H_START, self.startMs());
            m.set(ValueLayout.JAVA_INT, H_DOORBELL, doorbellPort);
            MemorySegment.copy(self.gid(), 0, m, ValueLayout.JAVA_BYTE, H_GID, 16);
            m.set(ValueLayout.JAVA_INT, H_PORT, self.port());
            m.set(ValueLayout.JAVA_INT, H_FLAGS, flags);
            m.set(ValueLayout.JAVA_LONG, H_POLLED, System.nanoTime() - 3_600_000_000_000L);
            LONG.setRelease(m, H_MAGIC, MAGIC); // last: a reader that sees the magic sees the rest
            ShmRingFiles.removeAtExit(file, true);
            return new ShmRing(file, arena, m, true, lanes, slots);
        } catch (IOException | RuntimeException e) {
            arena.close();
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /** The owner recorded in {@code file}'s header, or null if it is not a ring file (or unreadable). */
    static Identity ownerOf(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(72).order(java.nio.ByteOrder.nativeOrder());
            if (ch.read(b, 0) < 72 || b.getLong(0) != MAGIC) {
                return null;
            }
            byte[] gid = new byte[16];
            b.get((int) H_GID, gid);
            return new Identity(b.getLong((int) H_PID), b.getLong((int) H_START), gid, b.getInt((int) H_PORT));
        } catch (IOException e) {
            return null;
        }
    }

    static ShmRing open(Path file) throws IOException {
        return open(file, ShmRingFiles.FOR_THIS_PROCESS, null, 0);
    }

    /**
     * Maps a peer's {@code file} as a producer after {@code files}' checks ({@link ShmRingFiles.Untrusted}),
     * and if {@code gid} is not null, only if its header names that GID and UDP {@code port} (Untrusted
     * too). IOException if it is not a valid ring file of this version (its header is checked against
     * the file's real size), or its owner is gone or closed.
     */
    static ShmRing open(Path file, ShmRingFiles files, byte[] gid, int port) throws IOException {
        Arena arena = Arena.ofShared();
        try (FileChannel ch = files.open(file)) {
            long size = ch.size();
            if (size < HEADER_BYTES) {
                throw new IOException(file + " is too short for a ring file");
            }
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            long magic = (long) LONG.getAcquire(m, H_MAGIC);
            int version = m.get(ValueLayout.JAVA_INT, H_VERSION);
            int lanes = m.get(ValueLayout.JAVA_INT, H_LANES);
            int slots = m.get(ValueLayout.JAVA_INT, H_SLOTS);
            int slotBytes = m.get(ValueLayout.JAVA_INT, H_SLOT_BYTES);
            if (magic != MAGIC || version != VERSION || slotBytes != SLOT_BYTES || lanes < 1 || lanes > MAX_LANES
                    || slots < 2 || slots > MAX_SLOTS || Integer.bitCount(slots) != 1
                    || fileBytes(lanes, slots) != size) {
                throw new IOException(file + " is not a version " + VERSION + " ring file of a consistent size");
            }
            if (gid != null && (MemorySegment.mismatch(m, H_GID, H_GID + 16, MemorySegment.ofArray(gid), 0, 16) >= 0
                    || m.get(ValueLayout.JAVA_INT, H_PORT) != port)) {
                throw new ShmRingFiles.Untrusted(file + " names another device than the GID and port it is named for");
            }
            ShmRing r = new ShmRing(file, arena, m, false, lanes, slots);
            if (r.ownerClosed() || !alive(r.ownerPid(), m.get(ValueLayout.JAVA_LONG, H_START))) {
                throw new IOException(file + " belongs to a device that is gone");
            }
            return r;
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    Path file() {
        return file;
    }

    int lanes() {
        return lanes;
    }

    int slots() {
        return slots;
    }

    long ownerPid() {
        return map.get(ValueLayout.JAVA_LONG, H_PID);
    }

    long ownerStartMs() {
        return map.get(ValueLayout.JAVA_LONG, H_START);
    }

    /** The owner's header flags as read now (a sender reads them once, at open). */
    int flags() {
        return map.get(ValueLayout.JAVA_INT, H_FLAGS);
    }

    int doorbellPort() {
        return map.get(ValueLayout.JAVA_INT, H_DOORBELL) & 0xFFFF;
    }

    /** This side closed its mapping. */
    boolean closed() {
        return closed;
    }

    /** The owner closed the file (it is gone from the directory; a new owner makes a new one). */
    boolean ownerClosed() {
        return (int) INT.getAcquire(map, H_CLOSED) != 0;
    }

    long lane(int i) {
        return HEADER_BYTES + i * laneBytes;
    }

    static long stateWord(long pid, int state) {
        return pid << 8 | state;
    }

    /**
     * Claims a free lane for the producer {@code self}; null if every lane is taken. The lane becomes
     * ACTIVE and its bit is set in the claimed mask only after its identity and indices are written.
     */
    ShmProducer claim(Identity self) {
        long pid = self.pid();
        for (int i = 0; i < lanes; i++) {
            long b = lane(i);
            if ((long) LONG.getAcquire(map, b + L_STATE) != stateWord(0, FREE)
                    || !LONG.compareAndSet(map, b + L_STATE, stateWord(0, FREE), stateWord(pid, CLAIMED))) {
                continue;
            }
            MemorySegment.copy(self.gid(), 0, map, ValueLayout.JAVA_BYTE, b + L_GID, 16);
            map.set(ValueLayout.JAVA_INT, b + L_PORT, self.port());
            map.set(ValueLayout.JAVA_LONG, b + L_START, self.startMs());
            map.set(ValueLayout.JAVA_LONG, b + L_TAIL, 0);
            map.set(ValueLayout.JAVA_LONG, b + L_HEAD, 0);
            LONG.getAndAdd(map, b + L_GENERATION, 1L);
            LONG.setRelease(map, b + L_STATE, stateWord(pid, ACTIVE));
            setClaimedBit(i, true);
            return new ShmProducer(this, i, pid);
        }
        return null;
    }

    void setClaimedBit(int lane, boolean set) {
        long bit = 1L << lane;
        long m;
        do {
            m = (long) LONG.getVolatile(map, H_CLAIMED);
        } while (!LONG.compareAndSet(map, H_CLAIMED, m, set ? m | bit : m & ~bit));
    }

    /**
     * Rings the consumer's doorbell if it said it sleeps: true if this caller must send the wake-up
     * (only one caller wins the flag). Call after {@link ShmProducer#publish}; the full fence orders the
     * publish before the read, as the consumer's fence orders its flag before its last look (Dekker).
     */
    boolean takeSleeper() {
        VarHandle.fullFence();
        return (int) INT.getVolatile(map, H_SLEEPING) != 0 && INT.compareAndSet(map, H_SLEEPING, 1, 0);
    }

    /**
     * The owner: a thread of this process polled the ring at {@code nanoTime} (System.nanoTime, which
     * is CLOCK_MONOTONIC: the same clock in every process of the host), or stopped polling (a time
     * long past).
     */
    void notePoll(long nanoTime) {
        LONG.setOpaque(map, H_POLLED, nanoTime);
    }

    /** A producer: whether a thread of the owner polled the ring within {@code windowNs} of {@code now}. */
    boolean polledWithin(long now, long windowNs) {
        return now - (long) LONG.getOpaque(map, H_POLLED) < windowNs;
    }

    /** After {@link #takeSleeper()} returned true, with {@link #FLAG_FUTEX} set: wakes the consumer. */
    void wakeSleeper() {
        Futex.wake(sleepWord, 1);
    }

    // ------------------------------------------------------------------ consumer (see ShmConsumer)

    /** See {@link ShmConsumer#consume}. */
    int consume(ShmConsumer.Handler h, int max) {
        return consumer.consume(h, max);
    }

    /** See {@link ShmConsumer#releaseHold}. */
    void releaseHold(int lane) {
        consumer.releaseHold(lane);
    }

    /** See {@link ShmConsumer#corruptions}. */
    long corruptions() {
        return consumer.corruptions();
    }

    /** See {@link ShmConsumer#reapDeadProducers}. */
    int reapDeadProducers(ShmConsumer.Handler h) {
        return consumer.reapDeadProducers(h);
    }

    /** See {@link ShmConsumer#prepareToSleep}. */
    boolean prepareToSleep() {
        return consumer.prepareToSleep();
    }

    /** See {@link ShmConsumer#hasWork}. */
    boolean hasWork() {
        return consumer.hasWork();
    }

    /**
     * After {@link #prepareToSleep()} returned true, with {@link #FLAG_FUTEX}: sleeps until a producer
     * takes the sleeper (and wakes it), {@link #wakeOwnConsumer()}, or {@code timeoutNs} passed. The
     * caller's {@code timespec} holds the timeout ({@link Futex#TIMESPEC_BYTES}). True when the sleep
     * ended (or never began) because the sleeping word was cleared, false on a timeout or a signal.
     */
    boolean sleepUntilWoken(long timeoutNs, MemorySegment timespec) {
        int r = Futex.await(sleepWord, 1, timeoutNs, timespec);
        return r == 0 || r == -Futex.EAGAIN;
    }

    /** Ends the consumer's futex sleep from this process (closing). */
    void wakeOwnConsumer() {
        INT.setVolatile(map, H_SLEEPING, 0);
        Futex.wake(sleepWord, Integer.MAX_VALUE);
    }

    void awake() {
        INT.setVolatile(map, H_SLEEPING, 0);
    }

    // ------------------------------------------------------------------ close

    /**
     * Unmaps. The owner first marks the file closed (producers stop using it) and removes it from the
     * directory; a producer's mapping stays valid for it until it closes its own.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (owner) {
            INT.setRelease(map, H_CLOSED, 1);
            ShmRingFiles.removeAtExit(file, false);
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // the stale check of the next owner removes it
            }
        }
        arena.close();
    }
}
