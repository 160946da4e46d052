// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A post to a send or receive queue was refused. Like libibverbs' {@code bad_wr}, it identifies the
 * first work request that was not posted; requests before it in the chain were posted.
 */
public final class PostException extends VerbsException {
    private static final long serialVersionUID = 1L;
    private final transient Object badWr;
    private final int badIndex;

    public PostException(int errno, String message, Object badWr, int badIndex) {
        super(errno, message + " (work request #" + badIndex + " in the chain)");
        this.badWr = badWr;
        this.badIndex = badIndex;
    }

    /** The first work request that was not posted ({@link SendWorkRequest} or {@link RecvWorkRequest}). */
    public Object badWr() {
        return badWr;
    }

    /** Position of {@link #badWr()} in the posted chain, 0 for the head. */
    public int badIndex() {
        return badIndex;
    }
}
