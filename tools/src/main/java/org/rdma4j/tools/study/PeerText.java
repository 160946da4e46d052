// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

/** Text that came from another process, made fit to print: printable ASCII only, and not too long. Stateless. */
final class PeerText {
    static final int MAX = 200;

    private PeerText() {}

    /** {@code text} with every character outside printable ASCII as '?', cut to {@link #MAX} characters. */
    static String safe(String text) {
        if (text == null) {
            return "(nothing)";
        }
        StringBuilder b = new StringBuilder(Math.min(text.length(), MAX + 3));
        for (int i = 0; i < text.length() && i < MAX; i++) {
            char c = text.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        if (text.length() > MAX) {
            b.append("...");
        }
        return b.toString();
    }
}
