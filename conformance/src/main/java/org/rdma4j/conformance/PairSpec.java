// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.SharedReceiveQueue;

/**
 * How {@link AbstractVerbsTest#connect} builds a pair of queue pairs: side A on the device under test,
 * side B on the peer. Every knob has a default that makes a working, fast pair; a test changes only
 * what it is about. Mutable, fluent; not thread safe.
 */
public final class PairSpec {
    QpType type;
    Mtu mtu = Mtu.MTU_1024;
    QpCap capA = new QpCap(16, 16, 4, 4, 0);
    QpCap capB = new QpCap(16, 16, 4, 4, 0);
    int accessA = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
    int accessB = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
    boolean sqSigAllA;
    int cqe = 64;
    /** 4.096 us * 2^14 = 67 ms: long enough never to fire on a healthy loopback. */
    int timeout = 14;
    int retryCnt = 7;
    /** 7 = retry for ever. */
    int rnrRetry = 7;
    /** Advertised by B (A's requests are RNR NAKed with it): 12 = 0.64 ms. */
    int minRnrTimerB = 12;
    int minRnrTimerA = 12;
    /** -1: as many as the device allows, at most 16. */
    int maxRdAtomic = -1;
    int maxDestRdAtomic = -1;
    int psnA = 0x001000;
    int psnB = 0x002000;
    int qkey = AbstractVerbsTest.DEFAULT_QKEY;
    ProtectionDomain pdA;
    ProtectionDomain pdB;
    SharedReceiveQueue srqA;
    SharedReceiveQueue srqB;
    CompletionQueue sendCqA;
    CompletionQueue recvCqA;
    CompletionQueue sendCqB;
    CompletionQueue recvCqB;

    public PairSpec(QpType type) {
        this.type = type;
    }

    public QpType type() {
        return type;
    }

    public Mtu mtu() {
        return mtu;
    }

    public int qkey() {
        return qkey;
    }

    public PairSpec mtu(Mtu m) { mtu = m; return this; }
    /** Caps of both QPs. */
    public PairSpec cap(QpCap c) { capA = c.copy(); capB = c.copy(); return this; }
    public PairSpec capA(QpCap c) { capA = c; return this; }
    public PairSpec capB(QpCap c) { capB = c; return this; }
    /** The remote access flags B's QP accepts (A's requests are checked against them). */
    public PairSpec accessB(int a) { accessB = a; return this; }
    public PairSpec accessA(int a) { accessA = a; return this; }
    public PairSpec sqSigAllA(boolean b) { sqSigAllA = b; return this; }
    public PairSpec cqe(int n) { cqe = n; return this; }
    public PairSpec timeout(int t) { timeout = t; return this; }
    public PairSpec retryCnt(int n) { retryCnt = n; return this; }
    public PairSpec rnrRetry(int n) { rnrRetry = n; return this; }
    public PairSpec minRnrTimerB(int t) { minRnrTimerB = t; return this; }
    public PairSpec maxRdAtomic(int n) { maxRdAtomic = n; return this; }
    public PairSpec maxDestRdAtomic(int n) { maxDestRdAtomic = n; return this; }
    /** A's send PSN (= B's receive PSN) and B's send PSN (= A's receive PSN). */
    public PairSpec psns(int a, int b) { psnA = a; psnB = b; return this; }
    public PairSpec qkey(int k) { qkey = k; return this; }
    public PairSpec pdA(ProtectionDomain pd) { pdA = pd; return this; }
    public PairSpec pdB(ProtectionDomain pd) { pdB = pd; return this; }
    public PairSpec srqA(SharedReceiveQueue s) { srqA = s; return this; }
    public PairSpec srqB(SharedReceiveQueue s) { srqB = s; return this; }
    public PairSpec sendCqA(CompletionQueue cq) { sendCqA = cq; return this; }
    public PairSpec recvCqA(CompletionQueue cq) { recvCqA = cq; return this; }
    public PairSpec sendCqB(CompletionQueue cq) { sendCqB = cq; return this; }
    public PairSpec recvCqB(CompletionQueue cq) { recvCqB = cq; return this; }

    /** The guided-path settings of side A ({@code sideA}) or B, for the QP of {@code e}. */
    QueuePairBuilder builder(Endpoint e, boolean sideA) {
        return new QueuePairBuilder(e.pd(), type, e.sendCq(), e.recvCq()).mtu(mtu).gidIndex(e.gidIndex())
                .access(sideA ? accessA : accessB).psn(sideA ? psnA : psnB).qkey(qkey)
                .minRnrTimer(sideA ? minRnrTimerA : minRnrTimerB).timeout(timeout).retryCnt(retryCnt)
                .rnrRetry(rnrRetry).maxRdAtomic(maxRdAtomic).maxDestRdAtomic(maxDestRdAtomic);
    }

    @Override
    public String toString() {
        return type + " " + mtu.bytes() + "B";
    }
}
