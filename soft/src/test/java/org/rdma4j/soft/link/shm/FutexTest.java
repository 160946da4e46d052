// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** futex(2) on a word of a shared file mapping, as the shared-memory link's consumer sleeps. */
class FutexTest {
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    @Test
    void aWaitOnAWordThatHoldsAnotherValueReturnsAtOnce() {
        assumeTrue(Futex.isAvailable(), () -> "no futex here: " + Futex.unavailabilityCause());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment word = arena.allocate(4, 4);
            MemorySegment ts = arena.allocate(Futex.TIMESPEC_BYTES, 8);
            word.set(ValueLayout.JAVA_INT, 0, 0);
            long t0 = System.nanoTime();
            // would sleep a minute if the value were not checked
            assertEquals(-Futex.EAGAIN, Futex.await(word, 1, 60_000_000_000L, ts));
            assertTrue(System.nanoTime() - t0 < 30_000_000_000L);
        }
    }

    @Test
    void aWaitEndsByItsTimeout() {
        assumeTrue(Futex.isAvailable(), () -> "no futex here: " + Futex.unavailabilityCause());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment word = arena.allocate(4, 4);
            MemorySegment ts = arena.allocate(Futex.TIMESPEC_BYTES, 8);
            word.set(ValueLayout.JAVA_INT, 0, 1);
            long t0 = System.nanoTime();
            assertEquals(-Futex.ETIMEDOUT, Futex.await(word, 1, 20_000_000L, ts));
            // it slept (a futex call that fails at once, e.g. on a bad argument, returns in microseconds)
            assertTrue(System.nanoTime() - t0 >= 10_000_000L, "returned after " + (System.nanoTime() - t0) + " ns");
        }
    }

    @Test
    void aWakeThroughOneMappingOfAFileEndsAWaitThroughAnother() throws Exception {
        assumeTrue(Futex.isAvailable(), () -> "no futex here: " + Futex.unavailabilityCause());
        Path f = Files.createTempFile(ShmLink.directory(), "rdma4j-futex-test", ".ring");
        try (Arena arena = Arena.ofShared();
             FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.allocate(4096));
            MemorySegment sleeper = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena).asSlice(128, 4);
            MemorySegment waker = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena).asSlice(128, 4);
            MemorySegment ts = arena.allocate(Futex.TIMESPEC_BYTES, 8);
            INT.setVolatile(sleeper, 0L, 1);
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            Thread t = Thread.ofPlatform().start(() -> {
                started.countDown();
                while ((int) INT.getVolatile(sleeper, 0L) == 1) {
                    Futex.await(sleeper, 1, 30_000_000_000L, ts); // not woken: 30 s, past the wait below
                }
                done.countDown();
            });
            started.await();
            Thread.sleep(50); // most likely asleep in the kernel by now
            INT.setVolatile(waker, 0L, 0);
            Futex.wake(waker, 1);
            assertTrue(done.await(10, TimeUnit.SECONDS), "the sleeper was not woken");
            t.join();
            assertEquals(0, Futex.wake(waker, 1)); // nobody sleeps there now
        } finally {
            Files.deleteIfExists(f);
        }
    }
}
