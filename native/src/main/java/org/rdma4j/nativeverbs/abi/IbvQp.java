// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import org.rdma4j.verbs.spi.ffm.NativeLibrary;

/**
 * Downcalls of the exported libibverbs functions for completion queues, queue pairs, shared receive
 * queues, address handles and multicast. Every handle captures errno: its first argument is an
 * {@link org.rdma4j.verbs.spi.ffm.ErrnoCapture#segment()}. The functions that return a pointer set
 * errno when they return NULL; those that return an int return 0 or an errno (older providers
 * return -1 and set errno). Loaded on first use, by which time the provider knows the library is
 * there. Thread safe (immutable).
 */
public final class IbvQp {
    private IbvQp() {}

    private static final NativeLibrary LIB = NativeLibrary.load("libibverbs.so.1");

    private static MethodHandle h(String name, FunctionDescriptor d) {
        return LIB.downcallWithErrno(name, d);
    }

    /** {@code struct ibv_cq *ibv_create_cq(struct ibv_context *, int cqe, void *cq_context, struct ibv_comp_channel *, int comp_vector)}. */
    public static final MethodHandle CREATE_CQ = h("ibv_create_cq",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    public static final MethodHandle RESIZE_CQ = h("ibv_resize_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    public static final MethodHandle DESTROY_CQ = h("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code void ibv_ack_cq_events(struct ibv_cq *, unsigned int nevents)}. */
    public static final MethodHandle ACK_CQ_EVENTS = h("ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));

    public static final MethodHandle CREATE_QP = h("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    /** {@code int ibv_modify_qp(struct ibv_qp *, struct ibv_qp_attr *, int attr_mask)}. */
    public static final MethodHandle MODIFY_QP = h("ibv_modify_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int ibv_query_qp(struct ibv_qp *, struct ibv_qp_attr *, int attr_mask, struct ibv_qp_init_attr *)}. */
    public static final MethodHandle QUERY_QP = h("ibv_query_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
    public static final MethodHandle DESTROY_QP = h("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));

    public static final MethodHandle CREATE_SRQ = h("ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    /** {@code int ibv_modify_srq(struct ibv_srq *, struct ibv_srq_attr *, int srq_attr_mask)}. */
    public static final MethodHandle MODIFY_SRQ = h("ibv_modify_srq",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    public static final MethodHandle QUERY_SRQ = h("ibv_query_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    public static final MethodHandle DESTROY_SRQ = h("ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS));

    public static final MethodHandle CREATE_AH = h("ibv_create_ah", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle DESTROY_AH = h("ibv_destroy_ah", FunctionDescriptor.of(JAVA_INT, ADDRESS));

    /** {@code int ibv_attach_mcast(struct ibv_qp *, const union ibv_gid *, uint16_t lid)}. */
    public static final MethodHandle ATTACH_MCAST = h("ibv_attach_mcast",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_SHORT));
    public static final MethodHandle DETACH_MCAST = h("ibv_detach_mcast",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_SHORT));

    /** The errno of a failed int-returning verb: its return value, or errno when it returned -1. */
    public static int errnoOf(int ret, int errno) {
        return ret > 0 ? ret : errno != 0 ? errno : org.rdma4j.verbs.Errno.EIO;
    }
}
