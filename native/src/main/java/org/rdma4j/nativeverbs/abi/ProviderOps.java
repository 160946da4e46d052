package org.rdma4j.nativeverbs.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

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
 * <p>They are ordinary downcalls, not {@code Linker.Option.critical}: a provider's post may enter the
 * kernel (rxe rings its doorbell with a write(2) that runs the transport inline), which a critical call
 * must not do. Thread safe (immutable).
 */
public final class ProviderOps {
    private ProviderOps() {}

    private static final Linker LINKER = Linker.nativeLinker();

    /** {@code int (*post)(void *qp_or_srq, void *wr, void **bad_wr)}: post_send, post_recv, post_srq_recv. */
    public static final MethodHandle POST = downcall(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    /** {@code int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)}. */
    public static final MethodHandle POLL_CQ = downcall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));

    /** {@code int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only)}. */
    public static final MethodHandle REQ_NOTIFY_CQ = downcall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    @SuppressWarnings("restricted") // the module is granted native access by the launchers
    private static MethodHandle downcall(FunctionDescriptor d) {
        return LINKER.downcallHandle(d);
    }
}
