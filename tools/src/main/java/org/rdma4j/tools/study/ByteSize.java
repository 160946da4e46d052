// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A size in bytes: a number with an optional binary suffix, 4096, 4k, 64K, 1m, 1G. */
final class ByteSize implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        String v = value.strip().toUpperCase(Locale.ROOT);
        if (v.endsWith("IB")) {
            v = v.substring(0, v.length() - 2);
        } else if (v.endsWith("B") && v.length() > 1 && !Character.isDigit(v.charAt(v.length() - 2))) {
            v = v.substring(0, v.length() - 1);
        }
        int shift = 0;
        if (!v.isEmpty()) {
            switch (v.charAt(v.length() - 1)) {
                case 'K' -> shift = 10;
                case 'M' -> shift = 20;
                case 'G' -> shift = 30;
                case 'T' -> shift = 40;
                default -> { }
            }
        }
        if (shift > 0) {
            v = v.substring(0, v.length() - 1);
        }
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + value + "' is not a size (e.g. 4096, 64K, 1G)");
        }
        if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
            throw new TypeConversionException("'" + value + "' is out of range");
        }
        return n << shift;
    }

    /** 4096 -> "4 KiB", 1073741824 -> "1 GiB", 1000 -> "1000 B". */
    static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        int u = 0;
        long v = bytes;
        while (u < units.length - 1 && v >= 1024 && v % 1024 == 0) {
            v /= 1024;
            u++;
        }
        return v + " " + units[u];
    }
}
