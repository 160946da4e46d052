// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import org.rdma4j.verbs.spi.ffm.NativeLibrary;

/**
 * Downcall handles of the exported libibverbs functions (and the few libc calls) the device part of
 * the binding makes, plus what other handle classes need: the library ({@link #LIBIBVERBS}), the
 * first link failure ({@link #UNAVAILABLE}), and unbound handles for the function pointers the inline
 * verbs of verbs.h call through ({@code ctx->ops.alloc_mw}, {@code verbs_context.query_port}).
 *
 * <p>Handles that return an int status take the {@link org.rdma4j.verbs.spi.ffm.ErrnoCapture}
 * segment first: libibverbs returns some errors as the value and leaves others in errno. Every
 * handle is null when {@link #UNAVAILABLE} is set.
 */
public final class Ibv {
    private Ibv() {}

    public static final String LIBRARY = "libibverbs.so.1";
    public static final NativeLibrary LIBIBVERBS = NativeLibrary.load(LIBRARY);

    private static Throwable firstFailure;

    // device list
    public static final MethodHandle ibv_get_device_list = errno("ibv_get_device_list", ADDRESS, ADDRESS);
    public static final MethodHandle ibv_free_device_list = plain("ibv_free_device_list", null, ADDRESS);
    public static final MethodHandle ibv_get_device_name = plain("ibv_get_device_name", ADDRESS, ADDRESS);
    public static final MethodHandle ibv_get_device_guid = plain("ibv_get_device_guid", JAVA_LONG, ADDRESS);
    // context
    public static final MethodHandle ibv_open_device = errno("ibv_open_device", ADDRESS, ADDRESS);
    public static final MethodHandle ibv_close_device = errno("ibv_close_device", JAVA_INT, ADDRESS);
    public static final MethodHandle ibv_query_device = errno("ibv_query_device", JAVA_INT, ADDRESS, ADDRESS);
    /** The exported compat ibv_query_port, which the inline wrapper calls when the context has no query_port op. */
    public static final MethodHandle ibv_query_port = errno("ibv_query_port", JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS);
    public static final MethodHandle ibv_query_gid = errno("ibv_query_gid", JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT,
            ADDRESS);
    public static final MethodHandle _ibv_query_gid_ex = errno("_ibv_query_gid_ex", JAVA_INT, ADDRESS, JAVA_INT,
            JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG);
    public static final MethodHandle ibv_query_pkey = errno("ibv_query_pkey", JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT,
            ADDRESS);
    public static final MethodHandle ibv_get_async_event = errno("ibv_get_async_event", JAVA_INT, ADDRESS, ADDRESS);
    public static final MethodHandle ibv_ack_async_event = plain("ibv_ack_async_event", null, ADDRESS);
    // PD, MR
    public static final MethodHandle ibv_alloc_pd = errno("ibv_alloc_pd", ADDRESS, ADDRESS);
    public static final MethodHandle ibv_dealloc_pd = errno("ibv_dealloc_pd", JAVA_INT, ADDRESS);
    /** What the ibv_reg_mr macro calls for an access value not known at compile time. */
    public static final MethodHandle ibv_reg_mr_iova2 = errno("ibv_reg_mr_iova2", ADDRESS, ADDRESS, ADDRESS,
            JAVA_LONG, JAVA_LONG, JAVA_INT);
    public static final MethodHandle ibv_rereg_mr = errno("ibv_rereg_mr", JAVA_INT, ADDRESS, JAVA_INT, ADDRESS,
            ADDRESS, JAVA_LONG, JAVA_INT);
    public static final MethodHandle ibv_dereg_mr = errno("ibv_dereg_mr", JAVA_INT, ADDRESS);
    // completion channel
    public static final MethodHandle ibv_create_comp_channel = errno("ibv_create_comp_channel", ADDRESS, ADDRESS);
    public static final MethodHandle ibv_destroy_comp_channel = errno("ibv_destroy_comp_channel", JAVA_INT,
            ADDRESS);
    public static final MethodHandle ibv_get_cq_event = errno("ibv_get_cq_event", JAVA_INT, ADDRESS, ADDRESS,
            ADDRESS);

    // function pointers (unbound: the first argument is the function's address)
    /** {@code int (*query_port)(struct ibv_context *, uint8_t, struct ibv_port_attr *, size_t)}. */
    public static final MethodHandle QUERY_PORT_OP = pointer(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE,
            ADDRESS, JAVA_LONG));
    /** {@code struct ibv_mw *(*alloc_mw)(struct ibv_pd *, enum ibv_mw_type)}. */
    public static final MethodHandle ALLOC_MW_OP = pointer(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int (*dealloc_mw)(struct ibv_mw *)}. */
    public static final MethodHandle DEALLOC_MW_OP = pointer(FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int (*bind_mw)(struct ibv_qp *, struct ibv_mw *, struct ibv_mw_bind *)}. */
    public static final MethodHandle BIND_MW_OP = pointer(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    // libc
    public static final MethodHandle poll = libc("poll", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT);
    public static final MethodHandle eventfd = libc("eventfd", JAVA_INT, JAVA_INT, JAVA_INT);
    public static final MethodHandle write = libc("write", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    public static final MethodHandle read = libc("read", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    public static final MethodHandle close = libc("close", JAVA_INT, JAVA_INT);
    public static final MethodHandle fcntl = libcVariadic("fcntl", 2, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT);

    /**
     * Why the binding cannot be used (libibverbs missing, a symbol missing, native access denied), or
     * null. Set once, by the first failure of the handles above.
     */
    public static final Throwable UNAVAILABLE = firstFailure;

    private static FunctionDescriptor descriptor(java.lang.foreign.MemoryLayout ret,
            java.lang.foreign.MemoryLayout... args) {
        return ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args);
    }

    private static MethodHandle errno(String name, java.lang.foreign.MemoryLayout ret,
            java.lang.foreign.MemoryLayout... args) {
        return link(LIBIBVERBS, name, descriptor(ret, args), true);
    }

    private static MethodHandle plain(String name, java.lang.foreign.MemoryLayout ret,
            java.lang.foreign.MemoryLayout... args) {
        return link(LIBIBVERBS, name, descriptor(ret, args), false);
    }

    private static MethodHandle libc(String name, java.lang.foreign.MemoryLayout ret,
            java.lang.foreign.MemoryLayout... args) {
        return link(NativeLibrary.libc(), name, descriptor(ret, args), true);
    }

    private static MethodHandle libcVariadic(String name, int firstVariadic, java.lang.foreign.MemoryLayout ret,
            java.lang.foreign.MemoryLayout... args) {
        if (firstFailure != null) {
            return null;
        }
        try {
            return NativeLibrary.libc().downcallWithErrno(name, descriptor(ret, args),
                    Linker.Option.firstVariadicArg(firstVariadic));
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            firstFailure = e;
            return null;
        }
    }

    private static MethodHandle link(NativeLibrary lib, String name, FunctionDescriptor d, boolean withErrno) {
        if (firstFailure != null) {
            return null;
        }
        try {
            return withErrno ? lib.downcallWithErrno(name, d) : lib.downcall(name, d);
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            firstFailure = e;
            return null;
        }
    }

    /**
     * An unbound downcall handle of type {@code d} with errno capture: called as
     * {@code (MemorySegment function, MemorySegment errnoCapture, args...)}.
     */
    @SuppressWarnings("restricted")
    public static MethodHandle pointer(FunctionDescriptor d) {
        if (firstFailure != null) {
            return null;
        }
        try {
            return Linker.nativeLinker().downcallHandle(d, Linker.Option.captureCallState("errno"));
        } catch (RuntimeException e) { // IllegalCallerException: native access not enabled for this module
            firstFailure = new UnsatisfiedLinkError("cannot make downcalls from " + Ibv.class.getModule()
                    + ": native access is not enabled (--enable-native-access=org.rdma4j.nativeverbs)");
            firstFailure.initCause(e);
            return null;
        }
    }
}
