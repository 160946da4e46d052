// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What device to create, in a form every provider reads: a provider name, a kind the provider defines,
 * and options, written {@code provider[:kind][?key=value&key=value...]}. The SPI carries it unchanged;
 * only the named provider gives the kind and the keys a meaning, so a caller that creates devices
 * from a spec (a command-line tool, a configuration file) never compiles against a provider.
 * {@snippet :
 * Device udp = Verbs.createDevice("soft:udp?addr=10.0.0.1&mode=raw&name=udp0");
 * Device lossy = Verbs.createDevice(DeviceSpec.of("soft", "loopback").with("name", "lossy0").with("loss", "0.05"));
 * }
 * Keys and values may not contain {@code ?}, {@code &} or {@code =}; a value may contain {@code :}
 * (IPv6 addresses). Options keep their order. Immutable; thread safe.
 *
 * @param provider the provider's {@link org.rdma4j.verbs.spi.VerbsProvider#name() name}, e.g. "soft"
 * @param kind     the kind of device, meaningful to the provider (e.g. "udp"), or "" for its default
 * @param options  the options, in order, unmodifiable
 */
public record DeviceSpec(String provider, String kind, Map<String, String> options) {
    /**
     * Checks the parts and copies the options.
     *
     * @throws VerbsException EINVAL for an empty provider, a provider or kind with {@code ?&=:}, or an
     *     option whose key is empty or whose key or value holds {@code ?&=}
     * @throws NullPointerException for a null provider or kind
     */
    public DeviceSpec {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(kind, "kind");
        if (provider.isEmpty() || !plain(provider) || provider.contains(":") || !plain(kind) || kind.contains(":")) {
            throw new VerbsException(Errno.EINVAL, "bad device spec provider/kind '" + provider + ":" + kind + "'");
        }
        Map<String, String> copy = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (e.getKey().isEmpty() || !plain(e.getKey()) || !plain(e.getValue())) {
                throw new VerbsException(Errno.EINVAL, "bad device spec option '" + e.getKey() + "=" + e.getValue()
                        + "': keys and values may not contain ?, & or =");
            }
            copy.put(e.getKey(), e.getValue());
        }
        options = Collections.unmodifiableMap(copy);
    }

    /**
     * A spec for {@code provider}'s devices of {@code kind}, without options.
     *
     * @param provider the provider's name
     * @param kind     the kind, or "" for the provider's default
     * @return the spec
     * @throws VerbsException EINVAL as for the constructor
     */
    public static DeviceSpec of(String provider, String kind) {
        return new DeviceSpec(provider, kind, Map.of());
    }

    /**
     * Reads {@code provider[:kind][?key=value&...]}.
     *
     * @param text the spec's text form
     * @return the spec
     *
     * @throws VerbsException EINVAL if {@code text} is not of that form, or names an option twice
     */
    public static DeviceSpec parse(String text) {
        Objects.requireNonNull(text, "text");
        int q = text.indexOf('?');
        String head = q < 0 ? text : text.substring(0, q);
        int colon = head.indexOf(':');
        String provider = colon < 0 ? head : head.substring(0, colon);
        String kind = colon < 0 ? "" : head.substring(colon + 1);
        Map<String, String> options = new LinkedHashMap<>();
        if (q >= 0 && q + 1 < text.length()) {
            for (String pair : text.substring(q + 1).split("&", -1)) {
                int eq = pair.indexOf('=');
                String key = eq < 0 ? pair : pair.substring(0, eq);
                String value = eq < 0 ? "" : pair.substring(eq + 1);
                if (key.isEmpty() || options.put(key, value) != null) {
                    throw new VerbsException(Errno.EINVAL, "bad device spec '" + text + "': "
                            + (key.isEmpty() ? "an option without a name" : "option '" + key + "' given twice"));
                }
            }
        }
        return new DeviceSpec(provider, kind, options);
    }

    /**
     * This spec with option {@code key} set to {@code value} (replacing an earlier value).
     *
     * @param key   the option's name
     * @param value its value
     * @return a new spec
     * @throws VerbsException EINVAL as for the constructor
     */
    public DeviceSpec with(String key, String value) {
        Map<String, String> m = new LinkedHashMap<>(options);
        m.put(key, value);
        return new DeviceSpec(provider, kind, m);
    }

    /**
     * The value of an option.
     *
     * @param key the option's name
     * @return its value, or null when the spec does not name it
     */
    public String option(String key) {
        return options.get(key);
    }

    /**
     * The value of an option, with a default.
     *
     * @param key       the option's name
     * @param otherwise the value when the spec does not name it
     * @return the value
     */
    public String option(String key, String otherwise) {
        return options.getOrDefault(key, otherwise);
    }

    /** {@return the spec as {@link #parse} reads it} */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(provider);
        if (!kind.isEmpty()) {
            b.append(':').append(kind);
        }
        char sep = '?';
        for (Map.Entry<String, String> e : options.entrySet()) {
            b.append(sep).append(e.getKey()).append('=').append(e.getValue());
            sep = '&';
        }
        return b.toString();
    }

    private static boolean plain(String s) {
        return s.indexOf('?') < 0 && s.indexOf('&') < 0 && s.indexOf('=') < 0;
    }
}
