// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.link.DirectLink;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.link.Route;
import org.rdma4j.verbs.QpType;

/**
 * How a QP's packets reach its peer, decided once per destination instead of per packet: {@link
 * InProcess} when the device's link is the in-process fabric ({@link DirectLink}) and a device there
 * owns the destination GID (packets go straight to that device, one-packet WRITEs and SENDs are handed
 * to the peer QP's responder as a {@link PacketInfo} and positive ACKs to its completer without a
 * packet ({@link #handOver}, {@link #ack}), WRITEs go as bursts up to the send window,
 * owed ACKs leave soon); {@link OverLink} otherwise (UD, UDP, shared memory, a faulty link, or no
 * device owning the GID yet: packets through the link, bursts as the link allows, batches where it
 * sends them, owed ACKs after the link's delay). A QP keeps its path while it stays {@link #valid()}
 * (the route's fabric unchanged, the address vector unchanged) and resolves it again otherwise.
 * Task only, allocation free once resolved.
 */
abstract sealed class Path permits Path.InProcess, Path.OverLink {
    /** Whether the QP may keep using this path. */
    abstract boolean valid();

    /** The route to the peer's device on the in-process fabric, or null over a link. */
    abstract Route route();

    /** Sends one of the QP's packets. */
    abstract void send(Packet p);

    /** Sends {@code count} of the QP's packets at once, in order; clears the array's slots. */
    abstract void send(Packet[] packets, int count);

    /**
     * Hands a one-packet WRITE or SEND to the connected QP's responder without a packet, which checks
     * and executes it as it would its packet ({@link QpTask#takeHandOver}); false when it must go as
     * the packet (over a link, no such peer, a port down, the peer cannot take it now).
     */
    abstract boolean handOver(PacketInfo in);

    /**
     * Hands a positive ACK of {@code psn} to the connected QP's completer without a packet ({@link
     * QpTask#takeDirectAck}); false when it must go as the packet.
     */
    abstract boolean ack(int psn);

    /** Whether the packets of one requester step are collected and handed over together. */
    abstract boolean sendsInBatches();

    /** How many packets of one WRITE may go as one burst ({@link Packet#burstPackets}); 1: none. */
    abstract int burstLimit(int mtu);

    /** How long an owed ACK may wait for a later ACK to go with. */
    abstract long delayedAckNs();

    /**
     * Chooses the path of {@code qp} to its current destination: a new {@link InProcess} when a device
     * on the in-process fabric owns it, else the QP's own {@code overLink}.
     */
    static Path resolve(QpEngine qp, OverLink overLink) {
        Route r = qp.type == QpType.UD ? null : qp.hca.resolve(qp.dgid);
        return r != null ? new InProcess(qp, r) : overLink;
    }

    /** To a device in this JVM on the in-process fabric. */
    static final class InProcess extends Path {
        private final QpEngine qp;
        private final Hca hca;
        private final Route route;

        InProcess(QpEngine qp, Route route) {
            this.qp = qp;
            this.hca = qp.hca;
            this.route = route;
        }

        @Override
        boolean handOver(PacketInfo in) {
            QpEngine peer = qp.directPeer(route); // valid: the path was just asked for
            if (peer == null || !peer.task.takeHandOver(in)) {
                return false;
            }
            qp.packetCounts.sent();
            return true;
        }

        @Override
        boolean ack(int psn) {
            QpEngine peer = qp.directPeer(route); // valid: the path was just asked for
            if (peer == null || !peer.task.takeDirectAck(psn)) {
                return false;
            }
            qp.packetCounts.sent();
            return true;
        }

        @Override
        boolean valid() {
            return route.valid();
        }

        @Override
        Route route() {
            return route;
        }

        @Override
        void send(Packet p) {
            hca.send(p, route);
        }

        @Override
        void send(Packet[] packets, int count) {
            for (int i = 0; i < count; i++) {
                Packet p = packets[i];
                packets[i] = null;
                hca.send(p, route);
            }
        }

        @Override
        boolean sendsInBatches() {
            return false;
        }

        @Override
        int burstLimit(int mtu) {
            return Requester.WINDOW_PSNS;
        }

        @Override
        long delayedAckNs() {
            return Acknowledger.DELAYED_ACK_NS;
        }
    }

    /** Through the device's link. */
    static final class OverLink extends Path {
        private final QpEngine qp;

        OverLink(QpEngine qp) {
            this.qp = qp;
        }

        /** Always over a link but on the in-process fabric, where a GID no device owned may be owned later. */
        @Override
        boolean valid() {
            return qp.type == QpType.UD || !(qp.hca.link() instanceof DirectLink);
        }

        @Override
        Route route() {
            return null;
        }

        @Override
        boolean handOver(PacketInfo in) {
            return false;
        }

        @Override
        boolean ack(int psn) {
            return false;
        }

        @Override
        void send(Packet p) {
            qp.hca.send(p);
        }

        @Override
        void send(Packet[] packets, int count) {
            qp.hca.send(packets, count);
        }

        @Override
        boolean sendsInBatches() {
            return qp.hca.sendsInBatches();
        }

        @Override
        int burstLimit(int mtu) {
            return qp.hca.burstLimit(qp.dgid, mtu);
        }

        @Override
        long delayedAckNs() {
            return Acknowledger.LINK_DELAYED_ACK_NS;
        }
    }
}
