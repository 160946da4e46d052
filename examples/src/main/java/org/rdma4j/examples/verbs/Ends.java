// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.verbs;

/**
 * The command line the raw-verbs examples share: {@code [-d DEVICE [-d DEVICE]]}. The first device
 * is one end's, the second (default: the first) the other end's; without {@code -d} both ends open
 * the embedded soft device {@code soft0}.
 *
 * @param first  the device one end opens
 * @param second the device the other end opens
 */
record Ends(String first, String second) {
    static final String USAGE = "[-d DEVICE [-d DEVICE]]  (default: both ends on soft0)";

    /**
     * Parses {@code args}.
     *
     * @param args the program's arguments
     * @return the two devices
     * @throws IllegalArgumentException for anything else on the command line
     */
    static Ends parse(String[] args) {
        String a = null;
        String b = null;
        for (int i = 0; i < args.length; i++) {
            if (!args[i].equals("-d") || i + 1 == args.length || b != null) {
                throw new IllegalArgumentException("unexpected argument " + (i + 1) + " of " + args.length);
            }
            if (a == null) {
                a = args[++i];
            } else {
                b = args[++i];
            }
        }
        a = a == null ? "soft0" : a;
        return new Ends(a, b == null ? a : b);
    }
}
