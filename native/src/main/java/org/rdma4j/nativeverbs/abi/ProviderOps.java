// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * The data-path verbs that verbs.h defines {@code static inline}: {@code ibv_post_send},
 * {@code ibv_post_recv}, {@code ibv_post_srq_recv}, {@code ibv_poll_cq} and {@code ibv_req_notify_cq}
 * call the provider's function through {@code ctx->ops}, so there is no symbol to link. These handles
 * take that function pointer as their first argument (read once per object from the context's
 * {@code ibv_context_ops}), then the C arguments. Each returns what the provider returns: 0 or a
 * positive errno for the posts and the notify, the number of completions (or a negative value on
 * error) for poll.
 *
 * <p>The objects and arrays of {@link #POST} and {@link #POLL_CQ} are passed as raw addresses
 * ({@code JAVA_LONG}, what a pointer is in the C calling conventions of the 64-bit targets the JDK
 * links for), not as {@code MemorySegment}s: a segment argument costs a liveness check and, for a
 * shared arena's segment, an atomic acquire and release of its session per call. The callers keep
 * what the addresses point at alive themselves (a queue or CQ frees its arrays and handle only after
 * it is marked dead under the lock its posts and polls hold).
 *
 * <p>The posts are ordinary downcalls, not {@code Linker.Option.critical}: a provider's post may enter
 * the kernel (rxe rings its doorbell with a write(2) that runs the transport inline), which a critical
 * call must not do. {@link #POLL_CQ} is critical: {@code poll_cq} reads the CQ the provider shares with
 * the device in user space, never blocks and never calls back, so the thread-state transition (a
 * fence and a safepoint check each way) is left out. Thread safe (immutable).
 */
public final class ProviderOps {
    private ProviderOps() {}

    private static final Linker LINKER = Linker.nativeLinker();

    /**
     * {@code int (*post)(void *qp_or_srq, void *wr, void **bad_wr)}: post_send, post_recv, post_srq_recv;
     * (function, qp_or_srq address, wr address, bad_wr address).
     */
    public static final MethodHandle POST = downcall(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));

    /**
     * {@code int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)}; (function, cq address,
     * num_entries, wc address). Critical (no thread-state transition).
     */
    public static final MethodHandle POLL_CQ = downcall(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG),
            Linker.Option.critical(false));

    /** {@code int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only)}. */
    public static final MethodHandle REQ_NOTIFY_CQ = downcall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    @SuppressWarnings("restricted") // the module is granted native access by the launchers
    private static MethodHandle downcall(FunctionDescriptor d, Linker.Option... options) {
        return LINKER.downcallHandle(d, options);
    }
}
