// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.net.InetSocketAddress;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;

/**
 * A provider's own connection manager (librdmacm for the native provider): what the cm module uses
 * for a device whose context gives no QP1 ({@link GsiPort.GsiAccess}) but implements {@link CmAccess}.
 * The calls are rdma_cm's, one to one; their failures are {@link org.rdma4j.verbs.VerbsException}s
 * with the errno rdma_cm sets, and their outcomes arrive as {@link Event}s on the id's {@link Listener}
 * (from one thread of the provider, in the order rdma_cm reports them).
 */
public interface CmProvider {
    /** What a provider's {@link Context} implements when its device has a connection manager of its own. */
    interface CmAccess {
        /** {@return the device's connection manager} */
        CmProvider cmProvider();
    }

    /**
     * Creates an id (rdma_create_id).
     *
     * @param portSpace the RDMA_PS_* value (0x0106 TCP, 0x0111 UDP)
     * @param listener where its events go (may be replaced with {@link Id#listener})
     * @return the id
     */
    Id createId(int portSpace, Listener listener);

    /** Receives an id's events; called from the provider's event thread, must not block. */
    @FunctionalInterface
    interface Listener {
        void onEvent(Event event);
    }

    /**
     * One rdma_cm event, copied out before it was acknowledged.
     *
     * @param type the {@code enum rdma_cm_event_type} value
     * @param status as rdma_cm gives it (0, a negative errno, or a REJ reason)
     * @param id the id the event is about (for CONNECT_REQUEST the new id)
     * @param listenId for CONNECT_REQUEST the listening id, else null
     * @param privateData the private data the event carried (a copy; empty when none)
     * @param param the peer's connection parameters (CONNECT_REQUEST, CONNECT_RESPONSE, ESTABLISHED), else null
     */
    record Event(int type, int status, Id id, Id listenId, byte[] privateData, Param param, Ud ud) {
        /** An event without UD parameters. */
        public Event(int type, int status, Id id, Id listenId, byte[] privateData, Param param) {
            this(type, status, id, listenId, privateData, param, null);
        }
    }

    /**
     * {@code struct rdma_ud_param} of a UD id's event (CONNECT_REQUEST and ESTABLISHED of SIDR,
     * MULTICAST_JOIN/MULTICAST_ERROR) without its private data.
     *
     * @param ahAttr the address of the peer or group, to create the AddressHandle sends go through (null for
     *     MULTICAST_ERROR)
     * @param qpNum the peer's QPN (0xFFFFFF for a group)
     * @param qkey the peer's or group's Q_Key
     * @param context for multicast events the context given to {@link Id#joinMulticast}, else null
     */
    record Ud(org.rdma4j.verbs.AhAttr ahAttr, int qpNum, int qkey, Object context) {
    }

    /**
     * {@code struct rdma_conn_param} without its private data pointer.
     *
     * @param privateData the bytes
     * @param responderResources 0..255
     * @param initiatorDepth 0..255
     * @param flowControl 0 or 1
     * @param retryCount 0..7
     * @param rnrRetryCount 0..7
     * @param srq 0 or 1
     * @param qpNum 24 bits
     */
    record Param(byte[] privateData, int responderResources, int initiatorDepth, int flowControl, int retryCount,
            int rnrRetryCount, int srq, int qpNum) {
    }

    /** An rdma_cm_id of the provider. Thread safe. */
    interface Id extends AutoCloseable {
        /** Replaces where the id's events go (for a CONNECT_REQUEST's new id, before any of its events). */
        void listener(Listener l);

        void bindAddr(InetSocketAddress addr);

        void resolveAddr(InetSocketAddress src, InetSocketAddress dst, int timeoutMs);

        void resolveRoute(int timeoutMs);

        void listen(int backlog);

        /** rdma_create_qp: a QP of {@link #context()} that the provider's CM moves through its states. */
        QueuePair createQp(ProtectionDomain pd, QpInitAttr attr);

        /** rdma_destroy_qp; nothing when the id has no QP. */
        void destroyQp();

        void connect(Param p);

        void accept(Param p);

        void reject(byte[] privateData);

        void establish();

        /**
         * rdma_init_qp_attr: the attributes (with {@link QpAttr#mask()} set to the mask rdma_cm returns)
         * that move a QP the program created itself to {@code state} for this id.
         */
        QpAttr initQpAttr(QpState state);

        void disconnect();

        /**
         * rdma_join_multicast_ex: MULTICAST_JOIN (with {@link Ud}, the QP attached unless send-only) or
         * MULTICAST_ERROR follows.
         *
         * @param group the group's address
         * @param sendOnly RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER instead of FULLMEMBER
         * @param context given back in the events' {@link Ud#context()}
         */
        default void joinMulticast(java.net.InetAddress group, boolean sendOnly, Object context) {
            throw new org.rdma4j.verbs.VerbsException(org.rdma4j.verbs.Errno.EOPNOTSUPP,
                    "this connection manager has no multicast");
        }

        /** rdma_leave_multicast (EADDRNOTAVAIL when not joined). @param group the group's address */
        default void leaveMulticast(java.net.InetAddress group) {
            throw new org.rdma4j.verbs.VerbsException(org.rdma4j.verbs.Errno.EOPNOTSUPP,
                    "this connection manager has no multicast");
        }

        /** rdma_set_option(RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT). */
        void setAckTimeout(int exponent);

        /** {@return the device context of the id ({@code id->verbs}) once bound, else null; not to be closed} */
        Context context();

        /** {@return the port number, 0 while unbound} */
        int portNum();

        /** {@return the local address (rdma_get_local_addr), or null while unbound} */
        InetSocketAddress localAddress();

        /** {@return the peer's address (rdma_get_peer_addr), or null} */
        InetSocketAddress remoteAddress();

        /** {@return the source GID, or null while unresolved} */
        Gid sourceGid();

        /** {@return the destination GID, or null} */
        Gid destinationGid();

        /** rdma_destroy_id; idempotent. No events come for the id afterwards. */
        @Override
        void close();
    }
}
