// SPDX-License-Identifier: Apache-2.0
/**
 * The native provider: the host's RDMA devices through libibverbs, called with {@code java.lang.foreign}
 * (no JNI). It is found by {@link java.util.ServiceLoader} like every provider; where libibverbs or a
 * device is missing it reports itself unavailable with the reason
 * ({@link org.rdma4j.nativeverbs.NativeVerbs#unavailabilityCause()}). Needs native access:
 * {@code --enable-native-access=org.rdma4j.verbs,org.rdma4j.nativeverbs}.
 */
module org.rdma4j.nativeverbs {
    requires transitive org.rdma4j.verbs;
    exports org.rdma4j.nativeverbs;
    provides org.rdma4j.verbs.spi.VerbsProvider with org.rdma4j.nativeverbs.NativeProvider;
}
