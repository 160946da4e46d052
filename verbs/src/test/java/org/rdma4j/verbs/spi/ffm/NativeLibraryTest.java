// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi.ffm;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;

class NativeLibraryTest {
    private static final int EAFNOSUPPORT = 97;
    private static final String MISSING = "librdma4j-no-such-library.so.1";

    @BeforeAll
    static void linuxOnly() {
        Assumptions.assumeTrue(NativeLibrary.libc().isAvailable(), () -> "libc: " + NativeLibrary.libc());
    }

    @Test
    void failingLibcCallReportsItsErrno() throws Throwable {
        MethodHandle close = NativeLibrary.libc().downcallWithErrno("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        ErrnoCapture errno = new ErrnoCapture();

        int r = (int) close.invokeExact(errno.segment(), -1);

        assertEquals(-1, r);
        assertEquals(Errno.EBADF, errno.errno());
    }

    @Test
    void oneCaptureStateIsReusedAcrossCalls() throws Throwable {
        NativeLibrary libc = NativeLibrary.libc();
        MethodHandle close = libc.downcallWithErrno("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        MethodHandle socket = libc.downcallWithErrno("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT,
                JAVA_INT));
        ErrnoCapture errno = ErrnoCapture.perThread();
        assertSame(errno, ErrnoCapture.perThread());

        assertEquals(-1, (int) socket.invokeExact(errno.segment(), -1, 2, 0)); // no such address family
        assertEquals(EAFNOSUPPORT, errno.errno());
        assertEquals(-1, (int) close.invokeExact(errno.segment(), -1));
        assertEquals(Errno.EBADF, errno.errno());
    }

    @Test
    void plainDowncallTakesNoCaptureState() throws Throwable {
        MethodHandle getpid = NativeLibrary.libc().downcall("getpid", FunctionDescriptor.of(JAVA_INT));

        assertEquals(ProcessHandle.current().pid(), (long) (int) getpid.invokeExact());
    }

    @Test
    void missingLibraryIsUnavailableWithACauseNamingIt() {
        NativeLibrary lib = NativeLibrary.load(MISSING);

        assertFalse(lib.isAvailable());
        assertEquals(MISSING, lib.name());
        assertInstanceOf(UnsatisfiedLinkError.class, lib.unavailabilityCause());
        assertTrue(lib.unavailabilityCause().getMessage().contains(MISSING), lib.unavailabilityCause().getMessage());
        assertTrue(lib.find("close").isEmpty());

        UnsatisfiedLinkError ensured = assertThrows(UnsatisfiedLinkError.class, lib::ensureAvailability);
        assertSame(lib.unavailabilityCause(), ensured.getCause());
        UnsatisfiedLinkError linked = assertThrows(UnsatisfiedLinkError.class,
                () -> lib.downcallWithErrno("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT)));
        assertTrue(linked.getMessage().contains(MISSING), linked.getMessage());
        assertSame(lib.unavailabilityCause(), linked.getCause());
    }

    @Test
    void missingSymbolFailsNamingSymbolAndLibraryAndLeavesTheLibraryAvailable() {
        NativeLibrary libc = NativeLibrary.libc();

        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class,
                () -> libc.downcall("rdma4j_no_such_symbol", FunctionDescriptor.ofVoid()));

        assertEquals("symbol rdma4j_no_such_symbol not found in libc", e.getMessage());
        assertTrue(libc.isAvailable());
        assertNull(libc.unavailabilityCause());
    }

    @Test
    void namedLibraryIsFoundAndCalled() throws Throwable {
        // glibc's soname; absent on musl, where this test has nothing to load by name
        Assumptions.assumeTrue(Files.exists(Path.of("/lib/x86_64-linux-gnu/libc.so.6"))
                || Files.exists(Path.of("/lib/aarch64-linux-gnu/libc.so.6"))
                || Files.exists(Path.of("/lib64/libc.so.6")), "glibc");
        NativeLibrary lib = NativeLibrary.load("libc.so.6");

        assertTrue(lib.isAvailable(), lib::toString);
        lib.ensureAvailability();
        MethodHandle close = lib.downcallWithErrno("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        ErrnoCapture errno = new ErrnoCapture();
        assertEquals(-1, (int) close.invokeExact(errno.segment(), -1));
        assertEquals(Errno.EBADF, errno.errno());
    }
}
