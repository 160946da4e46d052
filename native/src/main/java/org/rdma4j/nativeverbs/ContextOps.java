// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.CLayout;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The provider's data-path functions, read from {@code context->ops} the way verbs.h's static inline
 * {@code ibv_post_send}, {@code ibv_poll_cq}, ... reach them. Objects read their functions once, when
 * they are created: a context's ops never change. Stateless.
 */
final class ContextOps {
    static final String POLL_CQ = "poll_cq";
    static final String REQ_NOTIFY_CQ = "req_notify_cq";
    static final String POST_SEND = "post_send";
    static final String POST_RECV = "post_recv";
    static final String POST_SRQ_RECV = "post_srq_recv";

    private ContextOps() {}

    /** The function pointer {@code ops.<member>} of {@code context}. */
    @SuppressWarnings("restricted")
    static MemorySegment function(NativeContext context, String member) {
        long offset = CLayout.offset(DeviceLayouts.ibv_context, "ops." + member);
        MemorySegment ctx = context.handle().reinterpret(DeviceLayouts.ibv_context.byteSize());
        MemorySegment fn = ctx.get(ValueLayout.ADDRESS, offset);
        if (fn.address() == 0) {
            throw new VerbsException(Errno.EOPNOTSUPP, context.device().name() + "'s provider has no " + member);
        }
        return fn;
    }
}
