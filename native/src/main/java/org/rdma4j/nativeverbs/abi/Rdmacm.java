// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.invoke.MethodHandle;
import org.rdma4j.verbs.spi.ffm.NativeLibrary;

/**
 * Downcall handles of librdmacm (rdma/rdma_cma.h). Every handle captures errno (librdmacm returns -1
 * or NULL and sets errno) and is null when {@link #UNAVAILABLE} is set.
 */
public final class Rdmacm {
    private Rdmacm() {}

    public static final String LIBRARY = "librdmacm.so.1";
    public static final NativeLibrary LIBRDMACM = NativeLibrary.load(LIBRARY);

    private static Throwable firstFailure;

    public static final MethodHandle rdma_create_event_channel = h("rdma_create_event_channel", ADDRESS);
    public static final MethodHandle rdma_destroy_event_channel = h("rdma_destroy_event_channel", null, ADDRESS);
    public static final MethodHandle rdma_create_id = h("rdma_create_id", JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
            JAVA_INT);
    public static final MethodHandle rdma_destroy_id = h("rdma_destroy_id", JAVA_INT, ADDRESS);
    public static final MethodHandle rdma_bind_addr = h("rdma_bind_addr", JAVA_INT, ADDRESS, ADDRESS);
    public static final MethodHandle rdma_resolve_addr = h("rdma_resolve_addr", JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
            JAVA_INT);
    public static final MethodHandle rdma_resolve_route = h("rdma_resolve_route", JAVA_INT, ADDRESS, JAVA_INT);
    public static final MethodHandle rdma_listen = h("rdma_listen", JAVA_INT, ADDRESS, JAVA_INT);
    public static final MethodHandle rdma_connect = h("rdma_connect", JAVA_INT, ADDRESS, ADDRESS);
    public static final MethodHandle rdma_accept = h("rdma_accept", JAVA_INT, ADDRESS, ADDRESS);
    public static final MethodHandle rdma_reject = h("rdma_reject", JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE);
    public static final MethodHandle rdma_establish = h("rdma_establish", JAVA_INT, ADDRESS);
    public static final MethodHandle rdma_init_qp_attr = h("rdma_init_qp_attr", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    public static final MethodHandle rdma_disconnect = h("rdma_disconnect", JAVA_INT, ADDRESS);
    public static final MethodHandle rdma_get_cm_event = h("rdma_get_cm_event", JAVA_INT, ADDRESS, ADDRESS);
    public static final MethodHandle rdma_ack_cm_event = h("rdma_ack_cm_event", JAVA_INT, ADDRESS);
    public static final MethodHandle rdma_create_qp = h("rdma_create_qp", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    public static final MethodHandle rdma_destroy_qp = h("rdma_destroy_qp", null, ADDRESS);
    public static final MethodHandle rdma_join_multicast_ex = h("rdma_join_multicast_ex", JAVA_INT, ADDRESS, ADDRESS,
            ADDRESS);
    public static final MethodHandle rdma_leave_multicast = h("rdma_leave_multicast", JAVA_INT, ADDRESS, ADDRESS);
    public static final MethodHandle rdma_set_option = h("rdma_set_option", JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
            ADDRESS, JAVA_LONG);

    /** Why librdmacm cannot be used (missing library or symbol, native access denied), or null. */
    public static final Throwable UNAVAILABLE = firstFailure;

    private static MethodHandle h(String name, MemoryLayout ret, MemoryLayout... args) {
        if (firstFailure != null) {
            return null;
        }
        try {
            return LIBRDMACM.downcallWithErrno(name,
                    ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args));
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            firstFailure = e;
            return null;
        }
    }
}
