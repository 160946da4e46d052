// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.VerbsException;

/**
 * What every provider's {@link QueuePair} shares: the checks of {@code ibv_create_qp}'s arguments that
 * come before the provider's (a type; both CQs of this provider and the PD's context, and open; an SRQ
 * of this provider), the parents those name and their accessors, and the opening of {@code modify}.
 * The subclass constructor claims the parents with {@link #uses} once its own checks pass. Thread safe.
 *
 * @param <P> the provider's protection domain type
 * @param <C> the provider's completion queue type
 * @param <S> the provider's shared receive queue type
 */
public abstract class AbstractQueuePair<P extends ProtectionDomain, C extends AbstractResource & CompletionQueue,
        S extends SharedReceiveQueue> extends AbstractPdResource<P> implements QueuePair {
    private final QpType type;
    private final C sendCq;
    private final C recvCq;
    private final S srq;

    /**
     * Checks {@code init} in this order: a type (EINVAL "no QP type"), the send CQ and then the receive
     * CQ (EINVAL when missing, of another provider or of another context; IllegalStateException when
     * closed), the SRQ (EINVAL when of another provider).
     *
     * @param pd       the PD the QP is made in
     * @param init     the creation attributes
     * @param cqClass  the provider's CQ class
     * @param srqClass the provider's SRQ class
     * @throws VerbsException EINVAL as above
     */
    protected AbstractQueuePair(P pd, QpInitAttr init, Class<C> cqClass, Class<S> srqClass) {
        super(pd);
        if (init == null || init.type == null) {
            throw new VerbsException(Errno.EINVAL, "no QP type");
        }
        this.type = init.type;
        this.sendCq = cq(pd.context(), init.sendCq, "send", cqClass);
        this.recvCq = cq(pd.context(), init.recvCq, "receive", cqClass);
        if (init.srq != null && !srqClass.isInstance(init.srq)) {
            throw new VerbsException(Errno.EINVAL, "the SRQ belongs to another provider");
        }
        this.srq = srqClass.cast(init.srq);
    }

    private static <C extends AbstractResource & CompletionQueue> C cq(Context context, CompletionQueue cq,
            String which, Class<C> cqClass) {
        if (!cqClass.isInstance(cq) || cq.context() != context) {
            throw new VerbsException(Errno.EINVAL, "the " + which + " CQ is missing or belongs to another context");
        }
        C c = cqClass.cast(cq);
        c.ensureOpen();
        return c;
    }

    @Override
    public final Context context() {
        return pd().context();
    }

    @Override
    public final QpType type() {
        return type;
    }

    @Override
    public final C sendCq() {
        return sendCq;
    }

    @Override
    public final C recvCq() {
        return recvCq;
    }

    @Override
    public final S srq() {
        return srq;
    }

    /**
     * The opening of every {@link #modify}: the QP is open, and there are attributes.
     *
     * @param attr the attributes given to modify
     * @throws IllegalStateException if the QP is closed
     * @throws VerbsException        EINVAL "no attributes" for null
     */
    protected final void checkModify(QpAttr attr) {
        ensureOpen();
        if (attr == null) {
            throw new VerbsException(Errno.EINVAL, "no attributes");
        }
    }

    /**
     * Fills what {@code ibv_query_qp} reports in {@code init_attr}: the type, CQs and SRQ this QP was
     * made with, and {@code cap} and {@code sqSigAll} as the provider knows them.
     *
     * @param out      the attributes to fill
     * @param cap      the capacities to report
     * @param sqSigAll whether every send is signaled
     */
    protected final void reportInit(QpInitAttr out, QpCap cap, boolean sqSigAll) {
        out.type = type;
        out.sendCq = sendCq;
        out.recvCq = recvCq;
        out.srq = srq;
        out.cap = cap;
        out.sqSigAll = sqSigAll;
    }
}
