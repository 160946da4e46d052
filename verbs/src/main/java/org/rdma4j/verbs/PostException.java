// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A post to a send or receive queue was refused ({@code ibv_post_send}, {@code ibv_post_recv} or
 * {@code ibv_post_srq_recv} returning an errno). Like libibverbs' {@code bad_wr}, it identifies the
 * first work request that was not posted; requests before it in the chain were posted.
 */
public final class PostException extends VerbsException {
    private static final long serialVersionUID = 1L;
    private final transient Object badWr;
    /** Position of the first request not posted (serialised). */
    private final int badIndex;

    /**
     * A refused post; the message gets the position of the bad request appended.
     *
     * @param errno    the errno ({@link Errno#EINVAL}, {@link Errno#ENOMEM}, ...)
     * @param message  why the request was refused
     * @param badWr    the first request not posted
     * @param badIndex its position in the chain, 0 for the head
     */
    public PostException(int errno, String message, Object badWr, int badIndex) {
        super(errno, message + " (work request #" + badIndex + " in the chain)");
        this.badWr = badWr;
        this.badIndex = badIndex;
    }

    /**
     * The first work request that was not posted ({@code bad_wr}). Not serialised.
     *
     * @return a {@link SendWorkRequest} or {@link RecvWorkRequest}; null after deserialisation
     */
    public Object badWr() {
        return badWr;
    }

    /**
     * Position of {@link #badWr()} in the posted chain: that many requests were posted before it.
     *
     * @return the index, 0 for the head
     */
    public int badIndex() {
        return badIndex;
    }
}
