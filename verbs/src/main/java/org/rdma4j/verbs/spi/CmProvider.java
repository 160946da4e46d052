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
        /**
         * Handles one event, on the provider's event thread; must not block.
         *
         * @param event the event
         */
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
     * @param ud the UD parameters of a UD id's event ({@link Ud}), else null
     */
    record Event(int type, int status, Id id, Id listenId, byte[] privateData, Param param, Ud ud) {
        /**
         * An event without UD parameters.
         *
         * @param type        the {@code enum rdma_cm_event_type} value
         * @param status      as rdma_cm gives it
         * @param id          the id the event is about
         * @param listenId    the listening id of a CONNECT_REQUEST, else null
         * @param privateData the private data (a copy; empty when none)
         * @param param       the peer's connection parameters, or null
         */
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
        /**
         * Replaces where the id's events go (for a CONNECT_REQUEST's new id, before any of its events).
         *
         * @param l the new listener
         */
        void listener(Listener l);

        /**
         * {@code rdma_bind_addr}: binds the id to a local address (and so to a device and port).
         *
         * @param addr the address; port 0 picks a free one
         */
        void bindAddr(InetSocketAddress addr);

        /**
         * {@code rdma_resolve_addr}: finds the device and route to {@code dst}; ADDR_RESOLVED or
         * ADDR_ERROR follows.
         *
         * @param src       the source address, or null to let the host's routes choose
         * @param dst       the destination
         * @param timeoutMs how long resolution may take, in milliseconds
         */
        void resolveAddr(InetSocketAddress src, InetSocketAddress dst, int timeoutMs);

        /**
         * {@code rdma_resolve_route}: ROUTE_RESOLVED or ROUTE_ERROR follows.
         *
         * @param timeoutMs how long resolution may take, in milliseconds
         */
        void resolveRoute(int timeoutMs);

        /**
         * {@code rdma_listen}: CONNECT_REQUEST events follow, each with a new id.
         *
         * @param backlog the most requests pending acceptance
         */
        void listen(int backlog);

        /**
         * {@code rdma_create_qp}: a QP of {@link #context()} that the provider's CM moves through its
         * states.
         *
         * @param pd   the PD, of the id's context
         * @param attr the QP's init attributes
         * @return the QP
         */
        QueuePair createQp(ProtectionDomain pd, QpInitAttr attr);

        /** rdma_destroy_qp; nothing when the id has no QP. */
        void destroyQp();

        /**
         * {@code rdma_connect}: sends the connection request; CONNECT_RESPONSE/ESTABLISHED, REJECTED or
         * UNREACHABLE follows.
         *
         * @param p the connection parameters
         */
        void connect(Param p);

        /**
         * {@code rdma_accept}: accepts a CONNECT_REQUEST's id; ESTABLISHED follows.
         *
         * @param p the connection parameters
         */
        void accept(Param p);

        /**
         * {@code rdma_reject}: refuses a CONNECT_REQUEST's id.
         *
         * @param privateData the bytes sent with the REJ (may be empty)
         */
        void reject(byte[] privateData);

        /** {@code rdma_establish}: completes a connection whose RTU the application sends itself. */
        void establish();

        /**
         * rdma_init_qp_attr: the attributes (with {@link QpAttr#mask()} set to the mask rdma_cm returns)
         * that move a QP the program created itself to {@code state} for this id.
         *
         * @param state INIT, RTR or RTS
         * @return the attributes, with their mask recorded
         */
        QpAttr initQpAttr(QpState state);

        /** {@code rdma_disconnect}: DISCONNECTED follows, on both sides. */
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

        /**
         * {@code rdma_leave_multicast}.
         *
         * @param group the group's address
         * @throws org.rdma4j.verbs.VerbsException EADDRNOTAVAIL when not joined; EOPNOTSUPP by default
         */
        default void leaveMulticast(java.net.InetAddress group) {
            throw new org.rdma4j.verbs.VerbsException(org.rdma4j.verbs.Errno.EOPNOTSUPP,
                    "this connection manager has no multicast");
        }

        /**
         * {@code rdma_set_option(RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT)}: the local ACK timeout of
         * the id's QP.
         *
         * @param exponent 0..31, meaning 4.096 us * 2^exponent
         */
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
