// SPDX-License-Identifier: Apache-2.0
/**
 * The {@code java.lang.foreign} plumbing shared by providers that call native code (the soft device's
 * libc sockets, a libibverbs provider): library lookup with availability and a cause
 * ({@link org.rdma4j.verbs.spi.ffm.NativeLibrary}), downcalls that capture errno, and the reusable
 * per-caller errno state they write ({@link org.rdma4j.verbs.spi.ffm.ErrnoCapture}).
 *
 * <p>The restricted methods ({@code Linker.downcallHandle}, {@code SymbolLookup.libraryLookup}) are
 * called from this module, so {@code org.rdma4j.verbs} needs native access
 * ({@code --enable-native-access=org.rdma4j.verbs,...}). Because whoever can call this package can make
 * downcalls with that access, it is exported only to the provider modules of this project.
 */
package org.rdma4j.verbs.spi.ffm;
