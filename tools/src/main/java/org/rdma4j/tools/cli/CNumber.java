// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Numbers as the C tools read them ({@code strtol(optarg, NULL, 0)}): decimal, {@code 0x} hex or
 * leading-zero octal, with an optional sign. Unlike strtol, text that is not a number is an error
 * instead of 0.
 */
public final class CNumber implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
        String v = value.strip();
        boolean negative = false;
        if (v.startsWith("-") || v.startsWith("+")) {
            negative = v.charAt(0) == '-';
            v = v.substring(1);
        }
        int radix = 10;
        if (v.length() > 2 && (v.startsWith("0x") || v.startsWith("0X"))) {
            radix = 16;
            v = v.substring(2);
        } else if (v.length() > 1 && v.startsWith("0")) {
            radix = 8;
            v = v.substring(1);
        }
        long n;
        try {
            if (v.isEmpty() || !Character.isLetterOrDigit(v.charAt(0))) {
                throw new NumberFormatException();
            }
            n = Long.parseLong(v, radix);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + value + "' is not a number");
        }
        if (negative) {
            n = -n;
        }
        if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
            throw new TypeConversionException("'" + value + "' is out of range");
        }
        return (int) n;
    }
}
