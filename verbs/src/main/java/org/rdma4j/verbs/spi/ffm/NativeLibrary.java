// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * A native library found (or not) through {@code java.lang.foreign}, and the downcalls into it. In the
 * way of Netty's {@code Epoll}: looking a library up never throws; a library that cannot be used here
 * says so ({@link #isAvailable()}) and why ({@link #unavailabilityCause()}), and everything that needs it
 * fails with that cause attached. A provider makes its handles once, in a static initializer, and
 * keeps the first failure as its own unavailability cause:
 *
 * {@snippet :
 * NativeLibrary ibverbs = NativeLibrary.load("libibverbs.so.1");
 * try {
 *     GET_DEVICE_LIST = ibverbs.downcallWithErrno("ibv_get_device_list",
 *             FunctionDescriptor.of(ADDRESS, ADDRESS));
 * } catch (UnsatisfiedLinkError e) {
 *     UNAVAILABLE = e; // names the library or the missing symbol, and why
 * }
 * }
 *
 * Only Linux on x86-64 and aarch64 is supported (callers lay out structs such as {@code msghdr} for
 * LP64 Linux); elsewhere every library is unavailable. Thread safe (immutable).
 */
public final class NativeLibrary {
    private static final Throwable PLATFORM_UNSUPPORTED = platformUnsupported();
    private static final NativeLibrary LIBC = libcLookup();

    private final String name;
    private final SymbolLookup lookup;
    private final Throwable unavailabilityCause;

    private NativeLibrary(String name, SymbolLookup lookup, Throwable unavailabilityCause) {
        this.name = name;
        this.lookup = lookup;
        this.unavailabilityCause = unavailabilityCause;
    }

    /** {@return the C library, through the linker's default lookup (unavailable off Linux x86-64/aarch64)} */
    public static NativeLibrary libc() {
        return LIBC;
    }

    /**
     * Looks up a shared library by file name (as {@code dlopen} would, e.g. {@code "libibverbs.so.1"})
     * or path. The library stays loaded for the life of the process. Never throws for a library that
     * cannot be loaded: the result is then unavailable, with a cause naming it.
     *
     * @param name a file name for the dynamic linker's search, or a path
     * @return the library, available or not
     */
    @SuppressWarnings("restricted") // the reason this package exists; see package-info
    public static NativeLibrary load(String name) {
        Objects.requireNonNull(name, "name");
        if (PLATFORM_UNSUPPORTED != null) {
            return new NativeLibrary(name, null,
                    linkError(name + " is unavailable: " + PLATFORM_UNSUPPORTED.getMessage(), PLATFORM_UNSUPPORTED));
        }
        try {
            return new NativeLibrary(name, SymbolLookup.libraryLookup(name, Arena.global()), null);
        } catch (IllegalArgumentException | IllegalCallerException e) {
            // IllegalArgumentException: dlopen failed; IllegalCallerException: native access denied
            return new NativeLibrary(name, null, linkError("cannot load native library " + name + ": "
                    + e.getMessage(), e));
        }
    }

    /** {@return the name the library was looked up by ("libc" for {@link #libc()})} */
    public String name() {
        return name;
    }

    /** {@return whether the library was found and can be called here} */
    public boolean isAvailable() {
        return unavailabilityCause == null;
    }

    /**
     * {@return why {@link #isAvailable()} is false (an {@link UnsatisfiedLinkError} naming the library);
     * null if available}
     */
    public Throwable unavailabilityCause() {
        return unavailabilityCause;
    }

    /**
     * Returns if the library is available, else throws.
     *
     * @throws UnsatisfiedLinkError naming the library, with the reason as its cause
     */
    public void ensureAvailability() {
        if (unavailabilityCause != null) {
            throw linkError(unavailabilityCause.getMessage(), unavailabilityCause);
        }
    }

    /**
     * The address of a symbol.
     *
     * @param symbol the symbol's name
     * @return its address, or empty if the library lacks it or is unavailable
     */
    public Optional<MemorySegment> find(String symbol) {
        return lookup == null ? Optional.empty() : lookup.find(symbol);
    }

    /**
     * A downcall handle for {@code symbol}, of type {@code descriptor} (plus what {@code options} add).
     *
     * @param symbol     the function's name
     * @param descriptor its C signature
     * @param options    linker options (e.g. {@code Linker.Option.critical})
     * @return the handle
     *
     * @throws UnsatisfiedLinkError if the library is unavailable (with its cause) or lacks the symbol
     */
    @SuppressWarnings("restricted")
    public MethodHandle downcall(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
        ensureAvailability();
        MemorySegment address = lookup.find(symbol).orElseThrow(
                () -> new UnsatisfiedLinkError("symbol " + symbol + " not found in " + name));
        try {
            return Linker.nativeLinker().downcallHandle(address, descriptor, options);
        } catch (IllegalCallerException e) {
            throw linkError("cannot link " + symbol + " in " + name + ": native access is not enabled for "
                    + NativeLibrary.class.getModule() + " (--enable-native-access)", e);
        }
    }

    /**
     * A downcall handle for {@code symbol} that captures errno: its first parameter is the
     * {@link ErrnoCapture#segment()} the call writes errno to, followed by those of {@code descriptor}.
     * Calls through it allocate nothing.
     *
     * @param symbol     the function's name
     * @param descriptor its C signature, without the capture segment
     * @param options    further linker options
     * @return the handle, whose first parameter is the capture segment
     *
     * @throws UnsatisfiedLinkError if the library is unavailable (with its cause) or lacks the symbol
     */
    public MethodHandle downcallWithErrno(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
        Linker.Option[] all = Arrays.copyOf(options, options.length + 1);
        all[options.length] = Linker.Option.captureCallState("errno");
        return downcall(symbol, descriptor, all);
    }

    @Override
    public String toString() {
        return isAvailable() ? name : name + " (unavailable: " + unavailabilityCause.getMessage() + ")";
    }

    private static Throwable platformUnsupported() {
        String os = System.getProperty("os.name", "");
        String arch = System.getProperty("os.arch", "");
        if (os.equals("Linux") && (arch.equals("amd64") || arch.equals("aarch64"))) {
            return null;
        }
        return new UnsupportedOperationException("native calls need Linux on x86-64 or aarch64, not "
                + os + "/" + arch);
    }

    private static NativeLibrary libcLookup() {
        if (PLATFORM_UNSUPPORTED != null) {
            return new NativeLibrary("libc", null,
                    linkError("libc is unavailable: " + PLATFORM_UNSUPPORTED.getMessage(), PLATFORM_UNSUPPORTED));
        }
        return new NativeLibrary("libc", Linker.nativeLinker().defaultLookup(), null);
    }

    private static UnsatisfiedLinkError linkError(String message, Throwable cause) {
        UnsatisfiedLinkError e = new UnsatisfiedLinkError(message);
        e.initCause(cause);
        return e;
    }
}
